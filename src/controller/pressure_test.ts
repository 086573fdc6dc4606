import assert from "node:assert/strict";
import { clamp, meanPressure, pressureScore } from "./pressure.ts";

const P = { lagSaturated: 5, inflightPerLoop: 256 };
const base = { cpuUsed: 0, cpusAssigned: 1, lagP99: 0, inflight: 0, loops: 1 };

Deno.test("clamp keeps values within 0..1", () => {
  assert.deepEqual([clamp(-0.5), clamp(0.25), clamp(1), clamp(7)], [0, 0.25, 1, 1]);
});

Deno.test("pressureScore: high CPU without loop lag is capped at lag + 0.5", () => {
  const p = pressureScore({ ...base, cpuUsed: 1, lagP99: 0.5 }, P);
  assert.equal(p.cpu, 1);
  assert.equal(p.lag, 0.1);
  assert.equal(p.cpu_lag, 0.6);
  assert.equal(p.score, 0.6);
  assert.equal(p.latency, null);
});

Deno.test("pressureScore: high CPU with rising lag is pressure", () => {
  const p = pressureScore({ ...base, cpuUsed: 0.95, lagP99: 4 }, P);
  assert.equal(p.lag, 0.8);
  assert.equal(p.cpu_lag, 0.95);
  assert.equal(p.score, 0.95);
});

Deno.test("pressureScore: lag without CPU is not pressure", () => {
  const p = pressureScore({ ...base, cpuUsed: 0.2, lagP99: 50 }, P);
  assert.equal(p.lag, 1);
  assert.equal(p.cpu_lag, 0.2);
  assert.equal(p.score, 0.2);
});

Deno.test("pressureScore: CPU is divided by the CPUs assigned and not clamped", () => {
  assert.equal(pressureScore({ ...base, cpuUsed: 1, cpusAssigned: 2, lagP99: 5 }, P).cpu, 0.5);
  const over = pressureScore({ ...base, cpuUsed: 1.3, lagP99: 5 }, P);
  assert.equal(over.cpu, 1.3);
  assert.equal(over.cpu_lag, 1.3);
  assert.equal(over.score, 1.3);
});

Deno.test("pressureScore: in-flight over loops x 256, clamped", () => {
  assert.equal(pressureScore({ ...base, inflight: 128 }, P).inflight, 0.5);
  assert.equal(pressureScore({ ...base, inflight: 128 }, P).score, 0.5);
  assert.equal(pressureScore({ ...base, inflight: 256, loops: 2 }, P).inflight, 0.5);
  assert.equal(pressureScore({ ...base, inflight: 9999 }, P).inflight, 1);
});

Deno.test("pressureScore: latency counts only with a p99 target", () => {
  assert.equal(pressureScore({ ...base, p99: 400 }, P).latency, null);
  const p = pressureScore({ ...base, p99: 150 }, { ...P, p99Target: 200 });
  assert.equal(p.latency, 0.75);
  assert.equal(p.score, 0.75);
  assert.equal(pressureScore({ ...base, p99: 900 }, { ...P, p99Target: 200 }).latency, 1);
});

Deno.test("meanPressure averages each component; null for no instances", () => {
  const a = pressureScore({ ...base, cpuUsed: 1, lagP99: 5 }, P);
  const b = pressureScore({ ...base, cpuUsed: 0.2 }, P);
  const m = meanPressure([a, b])!;
  assert.equal(m.cpu, 0.6);
  assert.equal(m.cpu_lag, 0.6);
  assert.equal(m.score, 0.6);
  assert.equal(m.latency, null);
  assert.equal(meanPressure([]), null);
});
