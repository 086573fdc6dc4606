import assert from "node:assert/strict";
import { ConfigError } from "../config/errors.ts";
import { ConfigGenerationStore, validateForController } from "./generations.ts";

const GOOD = `
server:
  listener_mode: reuseport
  listeners: [{name: http, address: "127.0.0.1:8080"}]
tenants:
  - name: t
    applications:
      - name: a
        domains: [example.test]
        runtime: {type: respond, body: "hi"}
`;

function errorsOf(text: string): readonly string[] {
  try {
    validateForController(text, "scalws.yaml");
  } catch (e) {
    if (e instanceof ConfigError) return e.errors;
    throw e;
  }
  assert.fail("expected a ConfigError");
}

Deno.test("validateForController requires reuseport listeners on fixed ports", () => {
  assert.deepEqual(validateForController(GOOD, "scalws.yaml"), []);
  assert.deepEqual(errorsOf(GOOD.replace("reuseport", "shared")), [
    "server.listener_mode: must be reuseport under the controller (is shared)",
  ]);
  assert.deepEqual(errorsOf(GOOD.replace(":8080", ":0")), [
    "server.listeners[0].address: port 0 cannot be shared by instances",
  ]);
  assert.deepEqual(errorsOf(GOOD.replace("listener_mode: reuseport", "listener_mode: nope")), [
    'server.listener_mode: invalid value "nope"; must be one of shared, reuseport, inherited',
  ]);
});

Deno.test("validateForController warns that admin.http is not started by instances", () => {
  const t = GOOD.replace(
    "listener_mode: reuseport",
    'listener_mode: reuseport\n  admin: {http: {address: "127.0.0.1:9091"}}',
  );
  assert.deepEqual(validateForController(t, "scalws.yaml"), [
    "server.admin.http: not started by instances under the controller (one port per host)",
  ]);
});

Deno.test("ConfigGenerationStore numbers generations upwards and never writes an invalid one", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-gen-" });
  try {
    const g = new ConfigGenerationStore(dir);
    await g.init();
    assert.deepEqual(await g.list(), []);
    assert.equal((await g.create(GOOD, "/etc/scalws.yaml")).number, 1);
    await assert.rejects(() => g.create("server: 1", "/etc/scalws.yaml"), ConfigError);
    // A directory left by a crash before the rename is skipped, and its number not reused.
    await Deno.mkdir(`${dir}/generations/2`);
    assert.equal((await g.create(GOOD.replace("hi", "v3"), "/etc/scalws.yaml")).number, 3);
    assert.deepEqual(await g.list(), [1, 3]);
    assert.equal(await Deno.readTextFile(g.path(3)), GOOD.replace("hi", "v3"));
    assert.equal((await Deno.stat(g.path(3))).mode! & 0o777, 0o600);
    assert.equal(await g.exists(2), false);
    assert.equal(await g.exists(1), true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
