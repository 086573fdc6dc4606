/**
 * Invalidation by unsafe methods: a POST, PUT, DELETE or PATCH answered with a non-error status
 * removes the stored entries of its URL and of its Location / Content-Location on the same host.
 */
import assert from "node:assert/strict";
import { cachedApp, get, request, scriptedMember, startScalwsd } from "./_support/mod.ts";

Deno.test("a successful unsafe request invalidates its URL, Location and Content-Location", async () => {
  await using m = scriptedMember((req) => {
    const path = new URL(req.url).pathname;
    if (req.method === "POST") {
      return {
        status: path === "/fail" ? 500 : 201,
        headers: {
          location: "/items/2",
          "content-location": "http://a.test/items/3",
        },
      };
    }
    if (req.method === "PUT") {
      return { status: 204, headers: { location: "http://other.test/items/4" } };
    }
    return { body: `${req.method} ${path}`, headers: { "cache-control": "max-age=600" } };
  });
  await using s = await startScalwsd(cachedApp(m));
  const paths = ["/items", "/items/2", "/items/3", "/items/4", "/fail"];
  for (const p of paths) await get(s.url + p, { host: "a.test" });
  assert.equal(s.server.cache.store.objects, 5);

  const post = await request(s.url + "/items", {
    method: "POST",
    headers: { host: "a.test" },
    body: "{}",
  });
  assert.equal(post.status, 201);
  assert.equal(post.headers.get("cache-status"), "scalwsd; fwd=bypass; fwd-status=201");
  const left = (p: string) => s.server.cache.store.variants(`http://a.test${p}`) !== undefined;
  assert.deepEqual(paths.map(left), [false, false, false, true, true]);

  // Another host's Location is not touched; an error status invalidates nothing.
  await request(s.url + "/items/4", { method: "PUT", headers: { host: "a.test" }, body: "x" });
  assert.equal(left("/items/4"), false);
  await request(s.url + "/fail", { method: "POST", headers: { host: "a.test" }, body: "x" });
  assert.equal(left("/fail"), true);

  const before = m.count;
  await get(s.url + "/items", { host: "a.test" });
  assert.equal(m.count, before + 1);
});

Deno.test("DELETE, PATCH and methods of unknown safety invalidate; safe methods leave the store alone", async () => {
  await using m = scriptedMember((req) => ({
    status: req.method === "GET" ? 200 : 200,
    body: req.method,
    headers: req.method === "GET" ? { "cache-control": "max-age=600" } : {},
  }));
  await using s = await startScalwsd(cachedApp(m));
  for (const method of ["DELETE", "PATCH", "M-SEARCH"]) {
    await get(s.url + "/d", { host: "a.test" });
    assert.equal(s.server.cache.store.objects, 1);
    const r = await request(s.url + "/d", { method, headers: { host: "a.test" }, body: "" });
    assert.equal(r.text, method);
    assert.equal(s.server.cache.store.objects, 0, method);
  }
  await get(s.url + "/d", { host: "a.test" });
  const options = await request(s.url + "/d", { method: "OPTIONS", headers: { host: "a.test" } });
  assert.equal(options.text, "OPTIONS");
  assert.equal(s.server.cache.store.objects, 1);
});
