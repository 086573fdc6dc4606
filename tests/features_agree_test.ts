/**
 * Features that must agree (issue 24): a sticky pool's answers are cached (scalwsd's own
 * affinity cookie is added at delivery, never stored).
 */
import assert from "node:assert/strict";
import { get, members, proxy, scalwsYaml, scriptedMember, startScalwsd } from "./_support/mod.ts";

for (
  const [name, pool] of [
    ["hash by cookie", { balance: "hash", hash: { by: "cookie" } }],
    ["sticky", { sticky: { ttl: "1h" } }],
  ] as const
) {
  Deno.test(`cache with a ${name} pool: a client without the cookie gets a stored answer, the cookie is never stored`, async () => {
    await using m = scriptedMember(() => ({
      body: "hello",
      headers: { "cache-control": "max-age=100" },
    }));
    await using s = await startScalwsd(scalwsYaml({
      upstreams: { p: { members: members(m), ...pool } },
      apps: [{ name: "a", domains: ["a.test"], runtime: proxy("p"), cache: {} }],
    }));
    const first = await get(s.url + "/x", { host: "a.test" });
    assert.equal(first.text, "hello");
    assert.equal(
      first.headers.get("cache-status"),
      "scalwsd; fwd=uri-miss; fwd-status=200; stored; ttl=100",
    );
    // The client still gets its cookie with the answer that was stored.
    assert.match(first.headers.get("set-cookie") ?? "", /^SCALWS_/);
    const second = await get(s.url + "/x", { host: "a.test" });
    assert.equal(second.text, "hello");
    assert.match(second.headers.get("cache-status") ?? "", /^scalwsd; hit; ttl=/);
    assert.equal(second.headers.get("set-cookie"), null);
    assert.equal(m.count, 1);
  });
}

Deno.test("a route with cache: alone inherits its application's runtime", async () => {
  await using m = scriptedMember(() => ({
    body: "from member",
    headers: { "cache-control": "max-age=100" },
  }));
  await using s = await startScalwsd(scalwsYaml({
    upstreams: { p: { members: members(m) } },
    apps: [{
      name: "a",
      domains: ["a.test"],
      runtime: proxy("p"),
      routes: [{ path: "/cached", cache: {} }],
    }],
  }));
  const first = await get(s.url + "/cached/x", { host: "a.test" });
  assert.equal(first.text, "from member");
  assert.match(first.headers.get("cache-status") ?? "", /fwd=uri-miss; fwd-status=200; stored/);
  const second = await get(s.url + "/cached/x", { host: "a.test" });
  assert.match(second.headers.get("cache-status") ?? "", /^scalwsd; hit/);
  // Other paths are not cached.
  const other = await get(s.url + "/other", { host: "a.test" });
  assert.equal(other.text, "from member");
  assert.equal(other.headers.get("cache-status"), null);
  assert.equal(m.count, 2);
});
