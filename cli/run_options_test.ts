import assert from "node:assert/strict";
import { runOptions } from "./run_options.ts";

Deno.test("runOptions defaults to a 30 s drain and no controller settings", () => {
  assert.deepEqual(runOptions({}), {}, "the drain deadline comes from server.drain_timeout");
});

Deno.test("runOptions reads the flags the controller passes", () => {
  assert.deepEqual(
    runOptions({
      "instance-id": "web-2",
      generation: "7",
      cpus: "1",
      "admin-socket": "/run/ctl/sockets/web-2.sock",
      "metrics-address": "127.0.0.1:19102",
      "drain-timeout": "5s",
    }),
    {
      instanceId: "web-2",
      configGeneration: 7,
      cpus: [1],
      adminSocket: "/run/ctl/sockets/web-2.sock",
      metricsAddress: { hostname: "127.0.0.1", port: 19102 },
      drainTimeout: 5_000,
    },
  );
});

Deno.test("runOptions names the bad flag", () => {
  assert.equal(
    runOptions({ generation: "0" }),
    '--generation: must be a positive integer, not "0"',
  );
  assert.equal(
    runOptions({ generation: "2x" }),
    '--generation: must be a positive integer, not "2x"',
  );
  assert.equal(runOptions({ "instance-id": "web 1" }), '--instance-id: invalid id "web 1"');
  assert.equal(runOptions({ cpus: "3-1" }), '--cpus: invalid CPU range "3-1": must go upwards');
  assert.equal(
    runOptions({ "metrics-address": "127.0.0.1" }),
    '--metrics-address: invalid address "127.0.0.1": port is required',
  );
  assert.equal(
    runOptions({ "drain-timeout": "10" }),
    '--drain-timeout: invalid duration "10": write a number and a unit (d, h, m, s, ms), like 10s, 500ms or 1h30m',
  );
  assert.equal(runOptions({ "drain-timeout": "0s" }), "--drain-timeout: must be greater than 0");
});
