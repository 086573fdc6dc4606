import assert from "node:assert/strict";
import { RestartWindow } from "./restart_policy.ts";

Deno.test("RestartWindow: 1 s doubling to 60 s, then given up past max_restarts", () => {
  const w = new RestartWindow(10, 3_600_000);
  const delays = [];
  for (let i = 0; i < 10; i++) delays.push(w.crashed(i * 1000));
  assert.deepEqual(delays, [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000, 60000]);
  assert.equal(w.crashed(11_000), -1);
});

Deno.test("RestartWindow: restarts older than the window no longer count", () => {
  const w = new RestartWindow(2, 10_000);
  assert.equal(w.crashed(0), 1000);
  assert.equal(w.crashed(1000), 2000);
  assert.equal(w.crashed(5000), -1);
  // The first restart left the window: one more is allowed, and the delay shrinks with it.
  assert.equal(w.crashed(10_000), 2000);
  assert.equal(w.crashed(10_500), -1);
  assert.equal(w.crashed(25_000), 1000);
});

Deno.test("RestartWindow: max_restarts 0 never restarts", () => {
  assert.equal(new RestartWindow(0, 60_000).crashed(0), -1);
});
