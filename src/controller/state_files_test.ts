import assert from "node:assert/strict";
import {
  claimStateDir,
  type ControllerState,
  ControllerStateFile,
  formatControllerState,
  parseControllerState,
  restoreState,
} from "./state_files.ts";
import type { ProcInfo } from "./proc.ts";

const STATE: ControllerState = {
  desired: 3,
  configGeneration: 4,
  previousConfigGeneration: 2,
  autoscaling: true,
};

Deno.test("formatControllerState keeps the file format: generation and previous_generation", () => {
  assert.equal(
    formatControllerState(STATE),
    '{\n  "desired": 3,\n  "generation": 4,\n  "previous_generation": 2,\n  "autoscaling": true\n}\n',
  );
  assert.deepEqual(parseControllerState(formatControllerState(STATE)), STATE);
  const first = { ...STATE, previousConfigGeneration: null };
  assert.deepEqual(parseControllerState(formatControllerState(first)), first);
});

Deno.test("parseControllerState names every wrong field at once", () => {
  assert.throws(
    () => parseControllerState('{"desired": -1, "generation": 0, "autoscaling": "yes"}'),
    {
      message:
        "desired: must be a whole number; generation: must be a positive integer; autoscaling: must be true or false",
    },
  );
  assert.throws(
    () =>
      parseControllerState(
        '{"desired":1,"generation":1,"previous_generation":"1","autoscaling":true}',
      ),
    { message: "previous_generation: must be a positive integer or null" },
  );
  assert.throws(() => parseControllerState("[]"), { message: "not an object" });
  assert.throws(() => parseControllerState("{"), SyntaxError);
});

Deno.test("restoreState brings desired within min..max; autoscaling off in the file wins", () => {
  const limits = { min: 1, max: 4, autoscaling: true };
  assert.equal(restoreState({ ...STATE, desired: 9 }, limits).desired, 4);
  assert.equal(restoreState({ ...STATE, desired: 0 }, limits).desired, 1);
  assert.deepEqual(restoreState(STATE, limits), STATE);
  assert.equal(restoreState(STATE, { ...limits, autoscaling: false }).autoscaling, false);
  // A `disable` through the socket survives a restart.
  assert.equal(restoreState({ ...STATE, autoscaling: false }, limits).autoscaling, false);
});

Deno.test("ControllerStateFile reads null before the first write, then the latest of chained writes", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const f = new ControllerStateFile(dir);
    assert.equal(await f.read(), null);
    const writes = [1, 2, 3].map((desired) => f.write({ ...STATE, desired }));
    await Promise.all(writes);
    await f.flush();
    assert.deepEqual(await f.read(), { ...STATE, desired: 3 });
    assert.equal((await Deno.stat(f.path)).mode! & 0o777, 0o600);
    await Deno.writeTextFile(f.path, '{"desired": 1}');
    await assert.rejects(() => f.read(), {
      message: `cannot read ${dir}/controller.json: generation: must be a positive integer; ` +
        "autoscaling: must be true or false",
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

function proc(startTime: number): ProcInfo {
  return { state: "S", startTime, exe: "/usr/bin/deno", argv: [] };
}

Deno.test("claimStateDir refuses while the recorded controller runs, takes over a stale record", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/controller.pid`;
  try {
    const running = new Map([[100, proc(5000)], [200, proc(7000)]]);
    const readProc = (pid: number) => Promise.resolve(running.get(pid) ?? null);
    await claimStateDir({ stateDir: dir, pid: 100, readProc });
    assert.deepEqual(JSON.parse(await Deno.readTextFile(file)), { pid: 100, start_time: 5000 });
    // Claiming again from the same process is allowed (a restart within the process).
    await claimStateDir({ stateDir: dir, pid: 100, readProc });
    await assert.rejects(() => claimStateDir({ stateDir: dir, pid: 200, readProc }), {
      message: `another controller (PID 100) uses the state directory ${dir}`,
    });
    // PID 100 reused by another process (other start time): the record is stale.
    running.set(100, proc(9999));
    await claimStateDir({ stateDir: dir, pid: 200, readProc });
    assert.deepEqual(JSON.parse(await Deno.readTextFile(file)), { pid: 200, start_time: 7000 });
    await Deno.writeTextFile(file, "damaged");
    await claimStateDir({ stateDir: dir, pid: 200, readProc });
    assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
