/**
 * Serving from the cache: Age, Cache-Status, the client's conditional requests, revalidation of
 * stale entries with the member (304 updates the stored head), ranges. Time moves on a manual
 * clock given to scalwsd.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../src/base/clock.ts";
import { cachedApp, get, request, scriptedMember, startScalwsd } from "./_support/mod.ts";

Deno.test("a hit carries Age (the member's plus the time in cache) and Cache-Status", async () => {
  const clock = new ManualClock(Date.now());
  await using m = scriptedMember(() => ({
    body: "hello",
    headers: { "cache-control": "max-age=100", age: "10", "x-member": "kept" },
  }));
  await using s = await startScalwsd(cachedApp(m), { clock });
  const miss = await get(s.url + "/a?x=1", { host: "a.test" });
  assert.equal(
    miss.headers.get("cache-status"),
    "scalwsd; fwd=uri-miss; fwd-status=200; stored; ttl=100",
  );
  clock.advance(30_000);
  const hit = await get(s.url + "/a?x=1", { host: "a.test" });
  assert.equal(hit.text, "hello");
  assert.equal(hit.headers.get("age"), "40");
  assert.equal(hit.headers.get("cache-status"), "scalwsd; hit; ttl=60");
  assert.equal(hit.headers.get("x-member"), "kept");
  assert.equal(hit.headers.get("content-length"), "5");
  // Another query string is another key.
  const other = await get(s.url + "/a?x=2", { host: "a.test" });
  assert.match(other.headers.get("cache-status")!, /fwd=uri-miss/);
  assert.equal(m.count, 2);
});

Deno.test("the client's If-None-Match and If-Modified-Since are answered 304 from a fresh entry", async () => {
  const lm = "Thu, 01 Jan 2026 00:00:00 GMT";
  await using m = scriptedMember(() => ({
    body: "v1",
    headers: { "cache-control": "max-age=60", etag: '"v1"', "last-modified": lm },
  }));
  await using s = await startScalwsd(cachedApp(m));
  await get(s.url + "/c", { host: "a.test" });
  const inm = await get(s.url + "/c", { host: "a.test", "if-none-match": 'W/"v0", "v1"' });
  assert.equal(inm.status, 304);
  assert.equal(inm.text, "");
  assert.equal(inm.headers.get("etag"), '"v1"');
  assert.match(inm.headers.get("cache-status")!, /^scalwsd; hit/);
  const ims = await get(s.url + "/c", { host: "a.test", "if-modified-since": lm });
  assert.equal(ims.status, 304);
  const changed = await get(s.url + "/c", { host: "a.test", "if-none-match": '"v0"' });
  assert.equal(changed.status, 200);
  assert.equal(changed.text, "v1");
  assert.equal(m.count, 1);
});

Deno.test("a stale entry is revalidated; a 304 updates the stored head and the client gets the full answer", async () => {
  const clock = new ManualClock(Date.now());
  const seen: (string | null)[] = [];
  await using m = scriptedMember((req, n) => {
    seen.push(req.headers.get("if-none-match"));
    if (n === 1) {
      return {
        body: "full body",
        headers: { "cache-control": "max-age=10", etag: '"e1"', "x-v": "1" },
      };
    }
    return { status: 304, headers: { "cache-control": "max-age=20", etag: '"e1"', "x-v": "2" } };
  });
  await using s = await startScalwsd(cachedApp(m), { clock });
  await get(s.url + "/r", { host: "a.test" });
  clock.advance(15_000);
  const r = await get(s.url + "/r", { host: "a.test" });
  assert.equal(r.status, 200);
  assert.equal(r.text, "full body");
  assert.equal(r.headers.get("x-v"), "2");
  assert.equal(r.headers.get("cache-control"), "max-age=20");
  assert.equal(r.headers.get("cache-status"), "scalwsd; fwd=stale; fwd-status=304");
  assert.deepEqual(seen, [null, '"e1"']);
  // Fresh again for 20 s under the new head.
  clock.advance(15_000);
  const hit = await get(s.url + "/r", { host: "a.test" });
  assert.equal(hit.headers.get("cache-status"), "scalwsd; hit; ttl=5");
  assert.equal(hit.headers.get("x-v"), "2");
  // A conditional client of a stale entry gets its own 304 after the revalidation.
  clock.advance(10_000);
  const own = await get(s.url + "/r", { host: "a.test", "if-none-match": '"e1"' });
  assert.equal(own.status, 304);
  assert.equal(m.count, 3);
});

Deno.test("no-cache and must-revalidate answers are stored but revalidated", async () => {
  const clock = new ManualClock(Date.now());
  await using m = scriptedMember((req, n) => {
    const path = new URL(req.url).pathname;
    const cc = path === "/nc"
      ? "no-cache, max-age=60"
      : "must-revalidate, max-age=5, stale-while-revalidate=60";
    if (n > 2 && req.headers.get("if-none-match") === '"t"') {
      return { status: 304, headers: { "cache-control": cc, etag: '"t"' } };
    }
    return { body: path, headers: { "cache-control": cc, etag: '"t"' } };
  });
  await using s = await startScalwsd(cachedApp(m, { stale_if_error: "1m" }), { clock });
  await get(s.url + "/nc", { host: "a.test" });
  await get(s.url + "/mr", { host: "a.test" });
  const nc = await get(s.url + "/nc", { host: "a.test" });
  assert.equal(nc.text, "/nc");
  assert.match(nc.headers.get("cache-status")!, /fwd=request; fwd-status=304/);
  assert.equal(m.count, 3);
  clock.advance(10_000);
  // must-revalidate: never served stale, even inside stale-while-revalidate.
  const mr = await get(s.url + "/mr", { host: "a.test" });
  assert.equal(mr.text, "/mr");
  assert.match(mr.headers.get("cache-status")!, /fwd=stale; fwd-status=304/);
  assert.equal(m.count, 4);
});

Deno.test("a no-cache answer with a validator and no freshness is stored and revalidated on every use", async () => {
  const seen: (string | null)[] = [];
  await using m = scriptedMember((req) => {
    if (new URL(req.url).pathname === "/bare") {
      return { body: "no validator", headers: { "cache-control": "no-cache" } };
    }
    const inm = req.headers.get("if-none-match");
    seen.push(inm);
    const headers = { "cache-control": "no-cache", etag: '"v1"' };
    return inm === '"v1"' ? { status: 304, headers } : { body: "stored once", headers };
  });
  await using s = await startScalwsd(cachedApp(m));
  const first = await get(s.url + "/nc", { host: "a.test" });
  assert.equal(
    first.headers.get("cache-status"),
    "scalwsd; fwd=uri-miss; fwd-status=200; stored; ttl=0",
  );
  for (let i = 0; i < 2; i++) {
    const again = await get(s.url + "/nc", { host: "a.test" });
    assert.equal(again.status, 200);
    assert.equal(again.text, "stored once");
    assert.match(again.headers.get("cache-status")!, /fwd=request; fwd-status=304/);
  }
  // Every use asked the member, conditionally: the body came once.
  assert.deepEqual(seen, [null, '"v1"', '"v1"']);
  // Without a validator there is nothing to revalidate with: not stored.
  const bare = await get(s.url + "/bare", { host: "a.test" });
  assert.equal(bare.headers.get("cache-status"), "scalwsd; fwd=uri-miss; fwd-status=200");
});

Deno.test("request no-cache and max-age=0 revalidate (RFC 9111 5.2.1); only-if-cached never reaches the member", async () => {
  await using m = scriptedMember((req) => {
    if (req.headers.get("if-none-match") === '"k"') {
      return { status: 304, headers: { etag: '"k"' } };
    }
    return { body: "x", headers: { "cache-control": "max-age=60", etag: '"k"' } };
  });
  await using s = await startScalwsd(cachedApp(m));
  const none = await get(s.url + "/o", { host: "a.test", "cache-control": "only-if-cached" });
  assert.equal(none.status, 504);
  assert.equal(m.count, 0);
  await get(s.url + "/o", { host: "a.test" });
  const a = await get(s.url + "/o", { host: "a.test", "cache-control": "no-cache" });
  assert.equal(a.headers.get("cache-status"), "scalwsd; fwd=request; fwd-status=304");
  const b = await get(s.url + "/o", { host: "a.test", "cache-control": "max-age=0" });
  assert.equal(b.headers.get("cache-status"), "scalwsd; fwd=request; fwd-status=304");
  assert.equal(b.text, "x");
  const c = await get(s.url + "/o", { host: "a.test", "cache-control": "only-if-cached" });
  assert.equal(c.status, 200);
  assert.equal(m.count, 3);
});

Deno.test("ranges of a stored object are served with the right bytes; other ranges go to the member", async () => {
  const body = "0123456789abcdefghij";
  await using m = scriptedMember((req) => {
    if (req.headers.get("range") !== null) {
      return { status: 206, body: "member-range", headers: { "content-range": "bytes 0-1/20" } };
    }
    return { body, headers: { "cache-control": "max-age=60", etag: '"r"' } };
  });
  await using s = await startScalwsd(cachedApp(m));
  // Not stored yet: the range goes to the member and nothing is stored.
  const first = await get(s.url + "/g", { host: "a.test", range: "bytes=0-1" });
  assert.equal(first.text, "member-range");
  await get(s.url + "/g", { host: "a.test" });
  const cases: [string, number, string, string | null][] = [
    ["bytes=0-3", 206, "0123", "bytes 0-3/20"],
    ["bytes=15-", 206, "fghij", "bytes 15-19/20"],
    ["bytes=-4", 206, "ghij", "bytes 16-19/20"],
    ["bytes=18-99", 206, "ij", "bytes 18-19/20"],
    ["bytes=20-", 416, "", "bytes */20"],
    ["bytes=0-1,4-5", 200, body, null],
    ["lines=1-2", 200, body, null],
  ];
  for (const [range, status, text, cr] of cases) {
    const r = await get(s.url + "/g", { host: "a.test", range });
    assert.equal(r.status, status, range);
    assert.equal(r.text, text, range);
    assert.equal(r.headers.get("content-range"), cr, range);
  }
  const ifRange = await get(s.url + "/g", {
    host: "a.test",
    range: "bytes=0-1",
    "if-range": '"other"',
  });
  assert.equal(ifRange.status, 200);
  const ifRangeOk = await get(s.url + "/g", {
    host: "a.test",
    range: "bytes=0-1",
    "if-range": '"r"',
  });
  assert.equal(ifRangeOk.status, 206);
  assert.equal(m.count, 2);
});

Deno.test("HEAD is answered from a stored GET", async () => {
  await using m = scriptedMember(() => ({
    body: "twelve bytes",
    headers: { "cache-control": "max-age=60" },
  }));
  await using s = await startScalwsd(cachedApp(m));
  await get(s.url + "/h", { host: "a.test" });
  const h = await request(s.url + "/h", { method: "HEAD", headers: { host: "a.test" } });
  assert.equal(h.status, 200);
  assert.equal(h.headers.get("content-length"), "12");
  assert.equal(h.bytes.length, 0);
  assert.equal(m.count, 1);
});

Deno.test("a hit carries the member's Date, and a 304 updates it (other-date-update)", async () => {
  const clock = new ManualClock(Date.now());
  const d1 = new Date(Date.now() - 3_000).toUTCString();
  const d2 = new Date(Date.now() + 12_000).toUTCString();
  await using m = scriptedMember((_req, n) =>
    n === 1
      ? { body: "x", headers: { "cache-control": "max-age=10", etag: '"d"', date: d1 } }
      : { status: 304, headers: { "cache-control": "max-age=10", etag: '"d"', date: d2 } }
  );
  await using s = await startScalwsd(cachedApp(m), { clock });
  await get(s.url + "/d", { host: "a.test" });
  clock.advance(5_000);
  const hit = await get(s.url + "/d", { host: "a.test" });
  assert.equal(hit.headers.get("date"), d1);
  assert.equal(hit.headers.get("age"), "5");
  clock.advance(10_000);
  const revalidated = await get(s.url + "/d", { host: "a.test" });
  assert.equal(revalidated.headers.get("cache-status"), "scalwsd; fwd=stale; fwd-status=304");
  assert.equal(revalidated.headers.get("date"), d2);
  assert.equal(revalidated.headers.get("age"), "0");
  assert.equal(m.count, 2);
});
