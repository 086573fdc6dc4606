/**
 * Several listeners on port 0 ("any free port", as tests and some deployments write them) are
 * each bound to a port of their own, and a reload keeps each one's socket.
 */
import assert from "node:assert/strict";
import { adminFetch, app, get, respond, scalwsYaml, startScalwsd } from "./_support/mod.ts";

Deno.test("two listeners on 127.0.0.1:0 each get a port; a reload keeps both", async () => {
  const yaml = (body: string) =>
    scalwsYaml({
      server: {
        listeners: [
          { name: "one", address: "127.0.0.1:0" },
          { name: "two", address: "127.0.0.1:0" },
        ],
      },
      apps: [app(respond(body))],
    });
  await using s = await startScalwsd(yaml("first"));
  const one = s.server.bound.get("one")?.port;
  const two = s.server.bound.get("two")?.port;
  assert.ok(one !== undefined && two !== undefined, "both listeners are bound");
  assert.notEqual(one, two);
  for (const port of [one, two]) {
    assert.equal((await get(`http://127.0.0.1:${port}/`, { host: "a.test" })).text, "first");
  }
  await s.write(yaml("second"));
  assert.equal((await adminFetch(s.adminSocket, "/v1/reload", { method: "POST" })).status, 200);
  assert.equal(s.server.bound.get("one")?.port, one);
  assert.equal(s.server.bound.get("two")?.port, two);
  for (const port of [one, two]) {
    assert.equal((await get(`http://127.0.0.1:${port}/`, { host: "a.test" })).text, "second");
  }
});
