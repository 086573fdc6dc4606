import assert from "node:assert/strict";
import { ConfigError, ValueError } from "./errors.ts";

Deno.test("ConfigError joins FILE: PATH: MESSAGE lines and keeps the list", () => {
  const errors = [
    "server.listeners: at least one listener is required",
    'upstreams.x: unknown key "y"',
  ];
  const e = new ConfigError("/etc/scalws.yaml", errors);
  assert.equal(e.name, "ConfigError");
  assert.equal(e.file, "/etc/scalws.yaml");
  assert.deepEqual(e.errors, errors);
  assert.ok(Object.isFrozen(e.errors));
  assert.equal(
    e.message,
    "/etc/scalws.yaml: server.listeners: at least one listener is required\n" +
      '/etc/scalws.yaml: upstreams.x: unknown key "y"',
  );
  assert.ok(e instanceof Error);
});

Deno.test("ValueError carries a field message", () => {
  const e = new ValueError('invalid duration "10x"');
  assert.equal(e.name, "ValueError");
  assert.equal(e.message, 'invalid duration "10x"');
});
