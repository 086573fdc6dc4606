/**
 * Tests of the one restart-backoff policy (`restart_backoff.ts`): the controller's history form
 * (`onFailure`) and a worker slot's in-memory form (`RestartWindow`), with their exact delays.
 */

import assert from "node:assert/strict";
import { onFailure, type RestartDecision, RestartWindow } from "./restart_backoff.ts";

const OPTS = { maxRestarts: 5, window: 300_000 };

Deno.test("onFailure backs off 1, 2, 4, 8, 16 s and gives up at the 6th failure in the window", () => {
  let history: readonly number[] = [];
  const delays: (number | "give up")[] = [];
  let now = 1_000_000;
  for (let i = 0; i < 6; i++) {
    const d: RestartDecision = onFailure(history, now, OPTS);
    delays.push(d.restart ? d.delay : "give up");
    history = d.failures;
    now += 10_000;
  }
  assert.deepEqual(delays, [1_000, 2_000, 4_000, 8_000, 16_000, "give up"]);
});

Deno.test("onFailure forgets failures older than the window", () => {
  const d = onFailure([0, 1_000, 2_000, 3_000, 4_000], 304_500, OPTS);
  // At 304.5 s every earlier failure (the newest is 300.5 s old) is outside the 300 s window.
  assert.deepEqual(d, { restart: true, delay: 1_000, failures: [304_500] });
  const e = onFailure([0, 10_000], 305_000, OPTS);
  assert.deepEqual(e, { restart: true, delay: 2_000, failures: [10_000, 305_000] });
});

Deno.test("onFailure caps the delay at 60 s", () => {
  const history = Array.from({ length: 9 }, (_, i) => i);
  const d = onFailure(history, 10, { maxRestarts: 20, window: 300_000 });
  assert.deepEqual(d.restart && d.delay, 60_000);
});

Deno.test("onFailure with max_restarts 0 never restarts", () => {
  assert.deepEqual(onFailure([], 5, { maxRestarts: 0, window: 1_000 }), {
    restart: false,
    failures: [5],
  });
});

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
