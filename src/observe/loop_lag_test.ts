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
  const m = new LoopLagMonitor({ interval: 5, size: 50 });
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

/** A started 5 ms monitor whose activity is a request count the test moves; it counts its samples. */
function activityProbe(idleInterval: number, idleAfter: number, sparseInterval = 250) {
  const p = {
    requests: 0,
    ticks: 0,
    monitor: null as unknown as LoopLagMonitor,
    /** `n` requests, `gapMs` apart. */
    async move(n: number, gapMs: number): Promise<void> {
      for (let i = 0; i < n; i++) {
        p.requests++;
        await new Promise((r) => setTimeout(r, gapMs));
      }
    },
  };
  p.monitor = new LoopLagMonitor({
    interval: 5,
    size: 50,
    activity: () => {
      p.ticks++;
      return p.requests;
    },
    idleInterval,
    idleAfter,
    sparseInterval,
  });
  p.monitor.start();
  return p;
}

Deno.test("LoopLagMonitor samples once per idleInterval while its activity stands still", async () => {
  const p = activityProbe(200, 20, 5);
  try {
    // Activity moves: a sample every 5 ms (6 ms apart: sparse, but sparseInterval is 5 here).
    await p.move(6, 6);
    const busy = p.ticks;
    assert.ok(busy >= 4, `${busy} samples in 36 ms of activity`);
    // Still for 20 ms, then one sample per 200 ms: at most a few in the next 150 ms.
    await new Promise((r) => setTimeout(r, 40));
    const before = p.ticks;
    await new Promise((r) => setTimeout(r, 150));
    assert.ok(p.ticks - before <= 1, `${p.ticks - before} samples in 150 ms idle`);
  } finally {
    p.monitor.stop();
  }
});

Deno.test("LagWindow recordTimes counts one sample as many, at most the window", () => {
  const w = new LagWindow(10);
  for (let i = 0; i < 10; i++) w.record(50);
  w.recordTimes(1, 9);
  assert.equal(w.p99(), 50);
  w.recordTimes(1, 1000);
  assert.equal(w.p99(), 1);
});

Deno.test("LoopLagMonitor samples every sparseInterval while requests come slower than its interval", async () => {
  const p = activityProbe(1000, 1000, 100);
  try {
    // A request every 30 ms for 600 ms: about one sample per 100 ms, not one per request (20)
    // nor one per 5 ms (120).
    await p.move(20, 30);
    assert.ok(
      p.ticks >= 3 && p.ticks <= 12,
      `${p.ticks} samples in 600 ms at one request per 30 ms`,
    );
  } finally {
    p.monitor.stop();
  }
});

Deno.test("LoopLagMonitor runs periodic about every periodicMs, busy or idle, and not after stop", async () => {
  let requests = 0;
  let calls = 0;
  const m = new LoopLagMonitor({
    interval: 5,
    size: 50,
    activity: () => requests,
    idleInterval: 40,
    idleAfter: 30,
    periodic: () => calls++,
    periodicMs: 100,
  });
  m.start();
  try {
    // 200 ms with requests (samples every 5 ms), then 250 ms still (samples every 40 ms).
    const busyUntil = performance.now() + 200;
    while (performance.now() < busyUntil) {
      requests++;
      await new Promise((r) => setTimeout(r, 4));
    }
    assert.ok(calls >= 1 && calls <= 2, `${calls} calls in 200 ms busy`);
    await new Promise((r) => setTimeout(r, 250));
    assert.ok(calls >= 3 && calls <= 5, `${calls} calls in 450 ms`);
  } finally {
    m.stop();
  }
  const after = calls;
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(calls, after);
});

Deno.test("LoopLagMonitor samples once per sleepInterval once its activity stood still for sleepAfter", async () => {
  let ticks = 0;
  const m = new LoopLagMonitor({
    interval: 5,
    size: 50,
    activity: () => {
      ticks++;
      return 0;
    },
    idleInterval: 20,
    idleAfter: 20,
    sleepAfter: 100,
    sleepInterval: 400,
  });
  m.start();
  try {
    // Still from the start: every 20 ms until 100 ms, then every 400 ms.
    await new Promise((r) => setTimeout(r, 90));
    assert.ok(ticks >= 3, `${ticks} samples in the first 90 ms`);
    await new Promise((r) => setTimeout(r, 60));
    const before = ticks;
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(ticks - before <= 1, `${ticks - before} samples in 300 ms asleep`);
  } finally {
    m.stop();
  }
});
