/**
 * The admin API answers a known path asked with a method it does not serve with `405`, an
 * `Allow` header and a message naming both, not with a `404` that says the path does not exist.
 */
import assert from "node:assert/strict";
import { adminFetch, app, members, proxy, scalwsYaml, startScalwsd } from "./_support/mod.ts";

Deno.test("admin API: a known path with another method gets 405 with Allow; unknown paths 404", async () => {
  await using s = await startScalwsd(scalwsYaml({
    upstreams: { p: { members_from: "api", members: members("127.0.0.1:9") } },
    apps: [app(proxy("p"))],
  }));
  const sock = s.adminSocket;
  const cases: [string, string, string][] = [
    ["DELETE", "/v1/upstreams/p", "GET, PUT"],
    ["POST", "/v1/upstreams/p", "GET, PUT"],
    ["GET", "/v1/reload", "POST"],
    ["PUT", "/v1/upstreams", "GET"],
  ];
  for (const [method, path, allow] of cases) {
    const r = await adminFetch(sock, path, { method });
    assert.equal(r.status, 405, `${method} ${path}`);
    assert.equal(r.headers.get("allow"), allow);
    assert.deepEqual(await r.json(), {
      error: `${method} is not allowed on ${path}; use ${allow.replace(", ", " or ")}`,
    });
  }
  const r = await adminFetch(sock, "/v1/nothing", { method: "DELETE" });
  assert.equal(r.status, 404);
  assert.deepEqual(await r.json(), { error: "not found" });
  // Nothing changed.
  const p = await (await adminFetch(sock, "/v1/upstreams/p")).json();
  assert.deepEqual(p.members.map((m: { address: string }) => m.address), ["127.0.0.1:9"]);
});
