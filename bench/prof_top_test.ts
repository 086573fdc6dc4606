import assert from "node:assert/strict";
import { type CpuProfile, formatSummary, summarize } from "./prof_top.ts";

function frame(functionName: string, url = "", lineNumber = -1) {
  return { functionName, url, lineNumber, columnNumber: 0 };
}

// root -> idle; root -> handle -> parse; root -> handle -> handle (recursion) -> parse; root -> gc
const PROFILE: CpuProfile = {
  startTime: 0,
  endTime: 7_000,
  nodes: [
    { id: 1, callFrame: frame("(root)"), children: [2, 3, 7] },
    { id: 2, callFrame: frame("(idle)") },
    { id: 3, callFrame: frame("handle", "ext:demo/serve.js", 9), children: [4, 5] },
    {
      id: 4,
      callFrame: frame("parse", "ext:demo/head.js", 19),
      positionTicks: [{ line: 22, ticks: 3 }],
    },
    { id: 5, callFrame: frame("handle", "ext:demo/serve.js", 9), children: [6] },
    {
      id: 6,
      callFrame: frame("parse", "ext:demo/head.js", 19),
      positionTicks: [{ line: 21, ticks: 1 }],
    },
    { id: 7, callFrame: frame("(garbage collector)") },
  ],
  // Each sample lasts until the next: deltas[i + 1] is sample i's time (us).
  samples: [2, 4, 4, 3, 6, 7, 2],
  timeDeltas: [0, 1000, 1000, 1000, 1000, 1000, 4000],
};

Deno.test("summarize ranks by self time and counts recursion once in total", () => {
  const s = summarize(PROFILE, 10);
  // The last sample (idle) gets the mean interval: 7000 us / 7 samples.
  assert.equal(s.idleMs, 2);
  assert.equal(s.busyMs, 8);
  assert.equal(s.gcMs, 4);
  assert.deepEqual(s.functions.map((f) => [f.name, f.selfMs, f.selfPct, f.totalPct]), [
    ["(garbage collector)", 4, 50, 50],
    ["parse", 3, 37.5, 37.5],
    ["handle", 1, 12.5, 50],
  ]);
  assert.equal(s.functions[1].location, "ext:demo/head.js:20");
  // Line ticks of Deno's own modules cannot be mapped, so none is shown.
  assert.equal(s.functions[1].hotLine, undefined);
});

Deno.test("summarize maps line ticks of file URLs through the resolver and sums per file", () => {
  const p: CpuProfile = {
    startTime: 0,
    endTime: 2000,
    nodes: [
      { id: 1, callFrame: frame("(root)"), children: [2] },
      {
        id: 2,
        callFrame: frame("send", "file:///nowhere/src/send.ts", 30),
        children: [3],
        positionTicks: [{ line: 50, ticks: 2 }],
      },
      { id: 3, callFrame: frame("", "file:///nowhere/src/send.ts", 60) },
    ],
    samples: [2, 3],
    timeDeltas: [0, 1000],
  };
  const s = summarize(p, 5, (url, line) => url.endsWith("send.ts") ? line - 10 : -1);
  // Function starts are taken as given; the tick on emitted line 50 maps to source line 40.
  assert.deepEqual(s.functions.map((f) => [f.name, f.location, f.hotLine]), [
    ["send", "/nowhere/src/send.ts:31", "/nowhere/src/send.ts:40"],
    ["(anonymous)", "/nowhere/src/send.ts:61", undefined],
  ]);
  assert.deepEqual(s.files, [{ file: "/nowhere/src/send.ts", selfMs: 2, selfPct: 100 }]);
  assert.match(
    formatSummary(s),
    /^ 1 +1\.0 +50\.0 +100\.0 +send +\/nowhere\/src\/send\.ts:31; hot \/nowhere\/src\/send\.ts:40$/m,
  );
});
