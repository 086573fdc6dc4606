import assert from "node:assert/strict";
import { ActiveHealthState } from "./active_health_state.ts";

Deno.test("ActiveHealthState starts up and goes down after fall consecutive failures", () => {
  const s = new ActiveHealthState();
  assert.equal(s.up, true);
  assert.equal(s.record(false, 10, 2, 3), false);
  assert.equal(s.record(false, 20, 2, 3), false);
  assert.equal(s.record(true, 30, 2, 3), false); // a pass breaks the run
  assert.equal(s.record(false, 40, 2, 3), false);
  assert.equal(s.record(false, 50, 2, 3), false);
  assert.equal(s.record(false, 60, 2, 3), true);
  assert.equal(s.up, false);
  assert.equal(s.record(false, 70, 2, 3), false);
  assert.deepEqual([s.fails, s.passes, s.lastProbeAt, s.lastResult], [4, 0, 70, false]);
});

Deno.test("ActiveHealthState comes back after rise consecutive passes", () => {
  const s = new ActiveHealthState();
  s.record(false, 1, 2, 1);
  assert.equal(s.up, false);
  assert.equal(s.record(true, 2, 2, 1), false);
  assert.equal(s.record(false, 3, 2, 1), false); // the run restarts
  assert.equal(s.record(true, 4, 2, 1), false);
  assert.equal(s.record(true, 5, 2, 1), true);
  assert.equal(s.up, true);
  assert.equal(s.record(true, 6, 2, 1), false);
  assert.deepEqual([s.passes, s.fails, s.lastResult], [3, 0, true]);
});
