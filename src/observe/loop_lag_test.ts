import assert from "node:assert/strict";
import { LagWindow, LoopLagMonitor } from "./loop_lag.ts";

Deno.test("LagWindow p99 is the nearest-rank 99th percentile of the latest samples", () => {
  const w = new LagWindow(100);
  assert.equal(w.p99(), 0);
  for (let i = 1; i <= 100; i++) w.record(i);
  assert.equal(w.p99(), 99);
  // 100 more samples of 0.5 push every earlier one out of the window.
  for (let i = 0; i < 100; i++) w.record(0.5);
  assert.equal(w.p99(), 0.5);
  w.record(-3);
  assert.equal(w.p99(), 0.5);
});

Deno.test("LagWindow p99 over a partly filled window", () => {
  const w = new LagWindow(250);
  for (let i = 0; i < 9; i++) w.record(1);
  w.record(40);
  // 10 samples: rank ceil(9.9) = 10, the largest.
  assert.equal(w.p99(), 40);
});

Deno.test("LoopLagMonitor sees a blocked event loop", async () => {
  const m = new LoopLagMonitor(5, 50);
  m.start();
  try {
    await new Promise((r) => setTimeout(r, 30));
    const until = performance.now() + 60;
    while (performance.now() < until) { /* block the loop for 60 ms */ }
    await new Promise((r) => setTimeout(r, 20));
    assert.ok(m.p99Seconds() >= 0.04, `p99 ${m.p99Seconds()} s after a 60 ms block`);
  } finally {
    m.stop();
  }
});
