import assert from "node:assert/strict";
import { ConfigError } from "../config/errors.ts";
import { ControlError, reloadRefused } from "./control_error.ts";

Deno.test("ControlError carries its status and message, errors only when given", () => {
  const e = new ControlError(409, "no previous generation to roll back to");
  assert.ok(e instanceof Error);
  assert.equal(e.name, "ControlError");
  assert.equal(e.status, 409);
  assert.equal(e.message, "no previous generation to roll back to");
  assert.equal(e.errors, undefined);
});

Deno.test("reloadRefused answers 400 and names the file in every error", () => {
  const e = reloadRefused(
    new ConfigError("/etc/scalws.yaml", ["server.listener_mode: must be reuseport", "x: y"]),
  );
  assert.equal(e.status, 400);
  assert.equal(
    e.message,
    "/etc/scalws.yaml: server.listener_mode: must be reuseport\n/etc/scalws.yaml: x: y",
  );
  assert.deepEqual(e.errors, [
    "/etc/scalws.yaml: server.listener_mode: must be reuseport",
    "/etc/scalws.yaml: x: y",
  ]);
  assert.ok(Object.isFrozen(e.errors));
});
