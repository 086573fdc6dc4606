import assert from "node:assert/strict";
import { derive } from "./measure.ts";
import type { WrkResult } from "./wrk_output.ts";

const RUN: WrkResult = {
  requestsPerSec: 20000,
  p50Ms: 1,
  p99Ms: 3,
  requests: 100_000,
  seconds: 5,
  non2xx: 0,
  connectErrors: 0,
  readErrors: 0,
  writeErrors: 0,
  timeouts: 0,
  transferPerSec: "3MB",
};

Deno.test("derive gives proxy CPU per request, CPU use, others' CPU and member connections", () => {
  const before = { proxy: { user: 1000, system: 500 }, ours: 5000, system: 9000, accepts: 10 };
  // 400 ticks at 100 Hz = 4 s of proxy CPU over 100,000 requests in 5 s.
  const after = { proxy: { user: 1250, system: 650 }, ours: 5950, system: 10_000, accepts: 62 };
  assert.deepEqual(derive(before, after, RUN, 100, 2), {
    cpuUsPerReq: 40,
    userUsPerReq: 25,
    sysUsPerReq: 15,
    cpuPct: 80,
    // 1000 busy ticks on the machine, 950 ours: 50 ticks = 0.5 s over 5 s = 10% of a core.
    otherPct: 10,
    // 52 accepted, 2 of them the status reads.
    upstreamConnsPer1k: 0.5,
  });
});

Deno.test("derive leaves out what a snapshot could not read", () => {
  assert.deepEqual(derive({}, { proxy: { user: 5, system: 5 } }, RUN, 100, 2), {});
  assert.deepEqual(derive({ accepts: 3 }, { accepts: 4 }, RUN, 100, 2), { upstreamConnsPer1k: 0 });
});
