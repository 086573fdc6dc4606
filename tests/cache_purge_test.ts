/**
 * Purge and visibility: POST /v1/cache/purge (exact, prefix, all), 400 naming the field,
 * audit lines, GET /v1/cache, `scalwsd ctl cache`, and purges under load.
 */
import assert from "node:assert/strict";
import { adminFetch, cachedApp, get, scriptedMember, startScalwsd } from "./_support/mod.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

function purge(socket: string, body: unknown): Promise<Response> {
  return adminFetch(socket, "/v1/cache/purge", { method: "POST", body: JSON.stringify(body) });
}

Deno.test("POST /v1/cache/purge removes one path, a prefix or everything, and answers the count", async () => {
  await using m = scriptedMember((req) => ({
    body: new URL(req.url).pathname,
    headers: { "cache-control": "max-age=600", vary: "x-v" },
  }));
  await using s = await startScalwsd(cachedApp(m));
  const fill = async () => {
    for (const p of ["/x", "/x?q=1", "/img/a", "/img/b", "/imgx", "/y"]) {
      await get(s.url + p, { host: "a.test" });
    }
    await get(s.url + "/x", { host: "a.test", "x-v": "2" });
  };
  await fill();
  assert.equal(s.server.cache.store.objects, 7);
  let r = await purge(s.adminSocket, { host: "a.test", path: "/x" });
  assert.deepEqual([r.status, await r.json()], [200, { purged: 3 }]);
  r = await purge(s.adminSocket, { host: "A.TEST", prefix: "/img/" });
  assert.deepEqual(await r.json(), { purged: 2 });
  r = await purge(s.adminSocket, { host: "other.test", prefix: "/" });
  assert.deepEqual(await r.json(), { purged: 0 });
  const before = m.count;
  const again = await get(s.url + "/img/a", { host: "a.test" });
  assert.match(again.headers.get("cache-status")!, /fwd=uri-miss/);
  assert.equal(m.count, before + 1);
  r = await purge(s.adminSocket, { all: true });
  assert.deepEqual(await r.json(), { purged: 3 });
  assert.equal(s.server.cache.store.objects, 0);
  assert.equal(s.server.cache.store.bytes, 0);
  const audits = s.logs.filter((l) => l.includes('"admin_audit"') && l.includes("cache_purge"));
  assert.equal(audits.length, 4);
  assert.match(audits[0], /"target":"a.test\/x","result":"ok","detail":\{"purged":3\}/);
});

Deno.test("POST /v1/cache/purge normalises its path and prefix as request paths are", async () => {
  await using m = scriptedMember((req) => ({
    body: new URL(req.url).pathname,
    headers: { "cache-control": "max-age=600" },
  }));
  await using s = await startScalwsd(cachedApp(m));
  for (const p of ["/a/b", "/a/b?q=1", "/img/c"]) await get(s.url + p, { host: "a.test" });
  assert.equal(s.server.cache.store.objects, 3);
  // A request for /a/./b or /a//b is stored under /a/b: a purge naming it so reaches it.
  let r = await purge(s.adminSocket, { host: "a.test", path: "/a/./b?q=1" });
  assert.deepEqual([r.status, await r.json()], [200, { purged: 1 }]);
  r = await purge(s.adminSocket, { host: "a.test", path: "/a//x/../b" });
  assert.deepEqual(await r.json(), { purged: 1 });
  r = await purge(s.adminSocket, { host: "a.test", prefix: "/x/../img/" });
  assert.deepEqual(await r.json(), { purged: 1 });
  assert.equal(s.server.cache.store.objects, 0);
});

Deno.test("POST /v1/cache/purge answers 400 naming the field", async () => {
  await using m = scriptedMember(() => ({ body: "x" }));
  await using s = await startScalwsd(cachedApp(m));
  const cases: [unknown, string][] = [
    [{ path: "/x" }, "host: is required"],
    [{ host: "a.test", path: "x" }, 'path: must start with "/"'],
    [{ host: "a.test", prefix: 3 }, 'prefix: must start with "/"'],
    [{ host: "a.test" }, "path: is required (or prefix)"],
    [{ all: false }, "all: must be true"],
    [{ host: "a.test", path: "/", color: "red" }, "color: unknown field"],
    [[1], 'body: must be an object: {"host", "path"}, {"host", "prefix"} or {"all": true}'],
  ];
  for (const [body, error] of cases) {
    const r = await purge(s.adminSocket, body);
    assert.deepEqual([r.status, await r.json()], [400, { error }], JSON.stringify(body));
  }
  const bad = await adminFetch(s.adminSocket, "/v1/cache/purge", { method: "POST", body: "{" });
  assert.deepEqual([bad.status, await bad.json()], [400, { error: "body: invalid JSON" }]);
  assert.ok(s.logs.some((l) => l.includes("cache_purge") && l.includes("refused 400")));
});

Deno.test("GET /v1/cache and scalwsd ctl cache show objects, bytes and hit ratio", async () => {
  await using m = scriptedMember(() => ({
    body: "0123456789",
    headers: { "cache-control": "max-age=60" },
  }));
  await using s = await startScalwsd(cachedApp(m));
  await get(s.url + "/a", { host: "a.test" });
  for (let i = 0; i < 3; i++) await get(s.url + "/a", { host: "a.test" });
  const stats = await (await adminFetch(s.adminSocket, "/v1/cache")).json();
  assert.equal(stats.objects, 1);
  assert.ok(stats.bytes > 10);
  assert.equal(stats.max_size, 256 * 1024 * 1024);
  assert.equal(stats.hit_ratio, 0.75);
  assert.deepEqual(
    stats.applications.map((
      a: Record<string, unknown>,
    ) => [a.tenant, a.app, a.objects, a.hit_ratio]),
    [["t", "a", 1, 0.75]],
  );
  const run = async (...args: string[]) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", MAIN, "ctl", "--socket", s.adminSocket, ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    return {
      code: out.code,
      text: new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr),
    };
  };
  const shown = await run("cache");
  assert.equal(shown.code, 0, shown.text);
  assert.match(shown.text, /objects 1 +bytes \d+ of 268435456 +evictions 0 +hit ratio 75\.0%/);
  assert.match(shown.text, /t +a +1 +\d+ +75\.0%/);
  const one = await run("cache", "purge", `http://a.test/a`);
  assert.equal(one.text.trim(), "purged 1 entry");
  await get(s.url + "/img/1", { host: "a.test" });
  await get(s.url + "/img/2", { host: "a.test" });
  const prefix = await run("cache", "purge", "--prefix", "http://a.test/img/");
  assert.equal(prefix.text.trim(), "purged 2 entries");
  const bad = await run("cache", "purge", "a.test/x");
  assert.equal(bad.code, 2);
});

Deno.test("purge under load: clients keep getting whole answers and purged entries are fetched again", async () => {
  await using m = scriptedMember((req) => ({
    body: "p".repeat(2000) + new URL(req.url).pathname,
    headers: { "cache-control": "max-age=600" },
  }));
  await using s = await startScalwsd(cachedApp(m));
  const paths = Array.from({ length: 16 }, (_, i) => `/load/${i}`);
  let stop = false;
  let bad = 0;
  let done = 0;
  const client = async (k: number) => {
    for (let i = 0; i < 200 && !stop; i++) {
      const p = paths[(i * 7 + k) % paths.length];
      const r = await get(s.url + p, { host: "a.test" });
      if (r.status !== 200 || r.text !== "p".repeat(2000) + p) bad++;
      done++;
    }
  };
  const clients = Array.from({ length: 8 }, (_, k) => client(k));
  let purged = 0;
  for (let i = 0; i < 10; i++) {
    await new Promise((r) => setTimeout(r, 30));
    const r = await purge(
      s.adminSocket,
      i % 2 ? { all: true } : { host: "a.test", prefix: "/load/" },
    );
    assert.equal(r.status, 200);
    purged += (await r.json()).purged;
  }
  stop = true;
  await Promise.all(clients);
  assert.equal(bad, 0);
  assert.ok(done > 0);
  assert.ok(purged > 0);
  // Every purge that removed entries made the member see those paths again.
  assert.ok(m.count >= paths.length + 1);
  assert.ok(m.count <= paths.length * 11, `member saw ${m.count}`);
});
