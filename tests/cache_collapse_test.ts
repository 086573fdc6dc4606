/**
 * Concurrent misses collapse into one member request (bounded wait); stale-while-revalidate
 * serves at once while one background request refreshes; stale-if-error covers member failures.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../src/base/clock.ts";
import { cachedApp, get, scriptedMember, sleep, startScalwsd, waitUntil } from "./_support/mod.ts";

Deno.test("a miss storm: 64 concurrent clients, one member request", async () => {
  await using m = scriptedMember(async () => {
    await sleep(200);
    return { body: "x".repeat(100_000), headers: { "cache-control": "max-age=60" } };
  });
  await using s = await startScalwsd(cachedApp(m));
  const all = await Promise.all(
    Array.from({ length: 64 }, () => get(s.url + "/storm", { host: "a.test" })),
  );
  assert.equal(m.count, 1);
  for (const r of all) {
    assert.equal(r.status, 200);
    assert.equal(r.bytes.length, 100_000);
  }
  const collapsed = all.filter((r) => /collapsed/.test(r.headers.get("cache-status")!)).length;
  assert.equal(collapsed, 63);
});

Deno.test("collapsed waits are bounded: past the wait, waiters go to the member themselves", async () => {
  await using m = scriptedMember(async (_req, n) => {
    if (n === 1) await sleep(600);
    return { body: "slow", headers: { "cache-control": "max-age=60" } };
  });
  await using s = await startScalwsd(cachedApp(m));
  s.server.cache.collapseWait = 50;
  const t0 = performance.now();
  const first = get(s.url + "/slow", { host: "a.test" });
  await waitUntil(() => m.count === 1, { what: "the first request at the member" });
  const second = await get(s.url + "/slow", { host: "a.test" });
  assert.ok(performance.now() - t0 < 550, "the second request did not wait for the first");
  assert.equal(second.text, "slow");
  assert.equal((await first).text, "slow");
  assert.equal(m.count, 2);
});

Deno.test("stale-while-revalidate: a stale entry is served at once while one request refreshes it", async () => {
  const clock = new ManualClock(Date.now());
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  await using m = scriptedMember(async (_req, n) => {
    if (n > 1) await gate;
    return { body: `v${n}`, headers: { "cache-control": "max-age=10, stale-while-revalidate=30" } };
  });
  await using s = await startScalwsd(cachedApp(m, { stale_while_revalidate: "20s" }), { clock });
  await get(s.url + "/s", { host: "a.test" });
  clock.advance(15_000);
  const stale = await Promise.all(
    Array.from({ length: 8 }, () => get(s.url + "/s", { host: "a.test" })),
  );
  for (const r of stale) {
    assert.equal(r.text, "v1");
    assert.equal(r.headers.get("cache-status"), "scalwsd; hit; ttl=-5");
  }
  await waitUntil(() => m.count === 2, { what: "the background refresh" });
  release();
  await waitUntil(async () => (await get(s.url + "/s", { host: "a.test" })).text === "v2", {
    what: "the refreshed entry",
  });
  assert.equal(m.count, 2);
  // Past the operator's cap (20 s, below the member's 30 s) the entry is revalidated in line.
  clock.advance(35_000);
  const late = await get(s.url + "/s", { host: "a.test" });
  assert.equal(late.text, "v3");
  assert.match(late.headers.get("cache-status")!, /fwd=stale; fwd-status=200; stored/);
});

Deno.test("stale-if-error serves a stale entry when the member fails (5xx, then down)", async () => {
  const clock = new ManualClock(Date.now());
  const m = scriptedMember((_req, n) =>
    n === 1
      ? { body: "good", headers: { "cache-control": "max-age=10, stale-if-error=60" } }
      : { status: 503, body: "down" }
  );
  await using s = await startScalwsd(cachedApp(m, { stale_if_error: "30s" }), { clock });
  await get(s.url + "/e", { host: "a.test" });
  clock.advance(20_000);
  const e1 = await get(s.url + "/e", { host: "a.test" });
  assert.equal(e1.status, 200);
  assert.equal(e1.text, "good");
  assert.equal(e1.headers.get("cache-status"), "scalwsd; hit; ttl=-10; detail=stale-if-error");
  await m.close();
  const e2 = await get(s.url + "/e", { host: "a.test" });
  assert.equal(e2.status, 200);
  assert.equal(e2.text, "good");
  // Past the operator's cap (30 s) the failure reaches the client.
  clock.advance(30_000);
  const e3 = await get(s.url + "/e", { host: "a.test" });
  assert.equal(e3.status, 502);
});

Deno.test("stale-if-error is off by default", async () => {
  const clock = new ManualClock(Date.now());
  await using m = scriptedMember((_req, n) =>
    n === 1
      ? { body: "good", headers: { "cache-control": "max-age=10, stale-if-error=60" } }
      : { status: 500, body: "broken" }
  );
  await using s = await startScalwsd(cachedApp(m), { clock });
  await get(s.url + "/e", { host: "a.test" });
  clock.advance(20_000);
  const r = await get(s.url + "/e", { host: "a.test" });
  assert.equal(r.status, 500);
  assert.equal(r.text, "broken");
});

Deno.test("an object that expires every second under steady load: one member request per expiry", async () => {
  await using m = scriptedMember(async () => {
    await sleep(20);
    return { body: "tick", headers: { "cache-control": "max-age=1" } };
  });
  await using s = await startScalwsd(cachedApp(m));
  const end = Date.now() + 2_500;
  let served = 0;
  const client = async () => {
    for (let i = 0; i < 2_000 && Date.now() < end; i++) {
      const r = await get(s.url + "/tick", { host: "a.test" });
      assert.equal(r.text, "tick");
      served++;
    }
  };
  await Promise.all(Array.from({ length: 32 }, client));
  assert.ok(served > 64, `${served} answers`);
  // 2.5 s of an object fresh for one second: the first miss and one per expiry.
  assert.ok(m.count >= 2 && m.count <= 4, `the member saw ${m.count} requests`);
});

Deno.test("concurrent revalidations of a stale entry send one conditional request", async () => {
  const clock = new ManualClock(Date.now());
  await using m = scriptedMember(async (req, n) => {
    if (n === 1) return { body: "v", headers: { "cache-control": "max-age=10", etag: '"v"' } };
    await sleep(100);
    assert.equal(req.headers.get("if-none-match"), '"v"');
    return { status: 304, headers: { "cache-control": "max-age=10", etag: '"v"' } };
  });
  await using s = await startScalwsd(cachedApp(m), { clock });
  await get(s.url + "/rv", { host: "a.test" });
  clock.advance(20_000);
  const all = await Promise.all(
    Array.from({ length: 16 }, () => get(s.url + "/rv", { host: "a.test" })),
  );
  for (const r of all) assert.equal(r.text, "v");
  assert.equal(m.count, 2);
  // Clients asking for validation (no-cache) collapse the same way.
  const again = await Promise.all(
    Array.from(
      { length: 16 },
      () => get(s.url + "/rv", { host: "a.test", "cache-control": "no-cache" }),
    ),
  );
  for (const r of again) assert.equal(r.text, "v");
  assert.equal(m.count, 3);
});

Deno.test("stale_if_disconnected: a stale entry is served when the member cannot be reached, not on its own 5xx nor with s-maxage", async () => {
  const clock = new ManualClock(Date.now());
  const m = scriptedMember((req, n) => {
    const path = new URL(req.url).pathname;
    if (n > 3) return { status: 500, body: "broken" };
    const cc = path === "/s" ? "s-maxage=10" : "max-age=10";
    return { body: `good ${path}`, headers: { "cache-control": cc } };
  });
  await using s = await startScalwsd(cachedApp(m, { stale_if_disconnected: "60s" }), { clock });
  for (const p of ["/d", "/s", "/e"]) await get(s.url + p, { host: "a.test" });
  clock.advance(20_000);
  // Reachable, answering 500: passed on (no stale-if-error from the member).
  const e = await get(s.url + "/e", { host: "a.test" });
  assert.equal(e.status, 500);
  await m.close();
  const d = await get(s.url + "/d", { host: "a.test" });
  assert.equal(d.status, 200);
  assert.equal(d.text, "good /d");
  assert.equal(d.headers.get("cache-status"), "scalwsd; hit; ttl=-10; detail=disconnected");
  // s-maxage: never served stale by a shared cache (RFC 9111 5.2.2.10).
  assert.equal((await get(s.url + "/s", { host: "a.test" })).status, 502);
  // Past the cap: the failure reaches the client.
  clock.advance(60_000);
  assert.equal((await get(s.url + "/d", { host: "a.test" })).status, 502);
});

Deno.test("a request waiting on another's revalidation keeps its own limits: no older entry for a no-cache or min-fresh request", async () => {
  await using m = scriptedMember(async (_req, n) => {
    if (n === 1) return { body: "v1", headers: { "cache-control": "max-age=600" } };
    // Asked again (the clients' no-cache): slowly, and not storable this time.
    await sleep(300);
    return { body: `v${n}`, headers: { "cache-control": "no-store" } };
  });
  await using s = await startScalwsd(cachedApp(m));
  assert.equal((await get(s.url + "/r", { host: "a.test" })).text, "v1");
  const ask = (cc: string) => get(s.url + "/r", { host: "a.test", "cache-control": cc });
  const leader = ask("no-cache");
  await sleep(50);
  const [a, b, c] = await Promise.all([leader, ask("no-cache"), ask("min-fresh=1000")]);
  // The leader's answer was not stored: the stored v1 is older than both waiters and does not
  // meet what they asked, so each went to the member itself.
  assert.match(a.text, /^v[234]$/);
  assert.match(b.text, /^v[234]$/);
  assert.match(c.text, /^v[234]$/);
  assert.equal(m.count, 4);
  // A plain request still gets v1, fresh.
  assert.equal((await get(s.url + "/r", { host: "a.test" })).text, "v1");
});
