/**
 * Features that must agree (issue 24): a sticky pool's answers are cached (scalwsd's own
 * affinity cookie is added at delivery, never stored); `cache:` alone on a route uses the
 * application's runtime; an api pool's file list that differs from the recorded one is warned.
 */
import assert from "node:assert/strict";
import {
  adminFetch,
  app,
  get,
  members,
  proxy,
  scalwsYaml,
  scriptedMember,
  startMember,
  startScalwsd,
} from "./_support/mod.ts";
import { checkFile } from "../cli/check.ts";

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

Deno.test("an api pool whose file members differ from the list recorded in state_dir: a warning from check and in the reload log", async () => {
  await using a = startMember("a");
  await using b = startMember("b");
  await using s = await startScalwsd(scalwsYaml({
    server: { state_dir: "{{dir}}/state" },
    upstreams: { dyn: { members_from: "api", members: members(a) } },
    apps: [app(proxy("dyn"))],
  }));
  const put = await adminFetch(s.adminSocket, "/v1/upstreams/dyn", {
    method: "PUT",
    body: JSON.stringify({ members: [{ address: b.address }] }),
  });
  assert.equal(put.status, 200);
  const warning = new RegExp(
    `upstreams\\.dyn\\.members: differ from the list recorded in state_dir ${s.dir}/state \\(${s.dir}/state/upstreams/dyn\\.json`,
  );
  const checked = await checkFile(s.file);
  assert.deepEqual(checked.errors, []);
  assert.equal(checked.warnings.length, 1, checked.warnings.join("\n"));
  assert.match(checked.warnings[0], /^\/.*scalws\.yaml:\d+:\d+: warning: /);
  assert.match(checked.warnings[0], warning);
  const r = await s.server.reload();
  assert.ok(r.ok);
  assert.equal(r.warnings.length, 1);
  assert.match(r.warnings[0], warning);
  const logged = s.logs.filter((l) => l.includes('"config_warning"')).map((l) => JSON.parse(l));
  assert.equal(logged.length, 1);
  assert.match(logged[0].warning, warning);
  // The same list in the file: no warning.
  await s.write(scalwsYaml({
    server: { state_dir: "{{dir}}/state" },
    upstreams: { dyn: { members_from: "api", members: members(b) } },
    apps: [app(proxy("dyn"))],
  }));
  assert.deepEqual((await checkFile(s.file)).warnings, []);
});
