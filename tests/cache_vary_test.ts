/**
 * Keys and variants: Vary makes variants under one key, compared after normalising; key_headers
 * and ignore_query shape the key; at most 32 variants per key.
 */
import assert from "node:assert/strict";
import { cachedApp, get, scriptedMember, startScalwsd } from "./_support/mod.ts";

Deno.test("two clients with different Accept-Encoding under Vary get their own variants", async () => {
  await using m = scriptedMember((req) => {
    const gzip = (req.headers.get("accept-encoding") ?? "").includes("gzip");
    return {
      body: gzip ? "gzipped-bytes" : "plain text",
      headers: {
        "cache-control": "max-age=60",
        vary: "Accept-Encoding",
        "content-encoding": gzip ? "gzip" : undefined,
      },
    };
  });
  await using s = await startScalwsd(cachedApp(m));
  const gz = { host: "a.test", "accept-encoding": "gzip, br" };
  const id = { host: "a.test", "accept-encoding": "identity" };
  const a1 = await get(s.url + "/v", gz);
  const b1 = await get(s.url + "/v", id);
  assert.equal(a1.text, "gzipped-bytes");
  assert.equal(b1.text, "plain text");
  assert.match(b1.headers.get("cache-status")!, /fwd=miss; fwd-status=200; stored/);
  // Same values up to case and whitespace around commas: same variant.
  const a2 = await get(s.url + "/v", { host: "a.test", "accept-encoding": "GZIP,br" });
  const b2 = await get(s.url + "/v", id);
  assert.equal(a2.text, "gzipped-bytes");
  assert.equal(a2.headers.get("content-encoding"), "gzip");
  assert.equal(b2.text, "plain text");
  assert.equal(b2.headers.get("content-encoding"), null);
  assert.match(a2.headers.get("cache-status")!, /^scalwsd; hit/);
  // No Accept-Encoding at all is a third variant.
  const none = await get(s.url + "/v", { host: "a.test" });
  assert.equal(none.text, "plain text");
  assert.equal(m.count, 3);
});

Deno.test("key_headers put request headers in the key; ignore_query leaves the query out", async () => {
  await using m = scriptedMember((req) => ({
    body: `${req.headers.get("x-theme")} ${new URL(req.url).search}`,
    headers: { "cache-control": "max-age=60" },
  }));
  await using s = await startScalwsd(
    cachedApp(m, { key_headers: ["X-Theme"], ignore_query: true }),
  );
  const dark = await get(s.url + "/k?a=1", { host: "a.test", "x-theme": "dark" });
  const light = await get(s.url + "/k?a=2", { host: "a.test", "x-theme": "light" });
  const dark2 = await get(s.url + "/k?b=3", { host: "a.test", "x-theme": "dark" });
  assert.equal(dark.text, "dark ?a=1");
  assert.equal(light.text, "light ?a=2");
  assert.equal(dark2.text, "dark ?a=1");
  assert.equal(m.count, 2);
});

Deno.test("at most 32 variants per key: the oldest goes first", async () => {
  await using m = scriptedMember((req) => ({
    body: req.headers.get("x-v") ?? "",
    headers: { "cache-control": "max-age=60", vary: "X-V" },
  }));
  await using s = await startScalwsd(cachedApp(m));
  for (let i = 0; i < 33; i++) await get(s.url + "/many", { host: "a.test", "x-v": String(i) });
  assert.equal(m.count, 33);
  assert.equal(s.server.cache.store.variants("http://a.test/many")!.length, 32);
  const newest = await get(s.url + "/many", { host: "a.test", "x-v": "32" });
  assert.match(newest.headers.get("cache-status")!, /^scalwsd; hit/);
  const oldest = await get(s.url + "/many", { host: "a.test", "x-v": "0" });
  assert.match(oldest.headers.get("cache-status")!, /fwd=miss/);
  assert.equal(m.count, 34);
});
