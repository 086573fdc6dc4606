import assert from "node:assert/strict";
import { keepTracestate, parseTraceparent, sampledFlag } from "./trace_context.ts";

const T = "4bf92f3577b34da6a3ce929d0e0e4736";
const S = "00f067aa0ba902b7";

Deno.test("parseTraceparent: version 00 with the sampled flag set or not", () => {
  assert.deepEqual(parseTraceparent(`00-${T}-${S}-01`), { traceId: T, spanId: S, sampled: true });
  assert.deepEqual(parseTraceparent(`00-${T}-${S}-00`), { traceId: T, spanId: S, sampled: false });
  // Other flag bits are ignored; bit 0 decides.
  assert.equal(sampledFlag(`00-${T}-${S}-03`), true);
  assert.equal(sampledFlag(`00-${T}-${S}-02`), false);
});

Deno.test("parseTraceparent: a later version may carry more fields after a dash", () => {
  assert.equal(sampledFlag(`01-${T}-${S}-01`), true);
  assert.equal(sampledFlag(`01-${T}-${S}-01-whatever`), true);
  assert.equal(sampledFlag(`01-${T}-${S}-01x`), null);
  // Version 00 is exactly 55 characters.
  assert.equal(sampledFlag(`00-${T}-${S}-01-x`), null);
});

Deno.test("parseTraceparent: refuses what the recommendation does not write", () => {
  for (
    const bad of [
      "",
      `ff-${T}-${S}-01`,
      `00-${T.toUpperCase()}-${S}-01`,
      `00-${"0".repeat(32)}-${S}-01`,
      `00-${T}-${"0".repeat(16)}-01`,
      `00-${T}-${S}-1`,
      `00_${T}-${S}-01`,
      `00-${T.slice(1)}-${S}-01`,
      `00-${T}-${S}-0g`,
      ` 00-${T}-${S}-01`,
    ]
  ) assert.equal(parseTraceparent(bad), null, bad);
});

Deno.test("keepTracestate: printable ASCII up to 512 characters, else dropped", () => {
  assert.equal(keepTracestate(null), "");
  assert.equal(keepTracestate("vendor=x,other=y"), "vendor=x,other=y");
  assert.equal(keepTracestate(" a=b "), "a=b");
  assert.equal(keepTracestate("a=b\n"), "");
  assert.equal(keepTracestate("a=é"), "");
  assert.equal(keepTracestate("a=" + "x".repeat(510)), "a=" + "x".repeat(510));
  assert.equal(keepTracestate("a=" + "x".repeat(511)), "");
});
