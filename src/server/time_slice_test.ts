import assert from "node:assert/strict";
import { EVENT_LOOP_SLICE_NS, setThreadSlice, threadSlice } from "./time_slice.ts";

/** Linux 6.12 and later take a custom slice under the normal policy. */
function customSlices(): boolean {
  if (Deno.build.os !== "linux") return false;
  const [major, minor] = Deno.osRelease().split(".").map((x) => parseInt(x));
  return major > 6 || (major === 6 && minor >= 12);
}

Deno.test({
  name: "setThreadSlice: the calling thread's slice is set and read back, its nice value kept",
  ignore: !customSlices(),
  fn() {
    const before = threadSlice();
    assert.ok(before !== null && before > 0);
    try {
      assert.equal(setThreadSlice(EVENT_LOOP_SLICE_NS), EVENT_LOOP_SLICE_NS);
      assert.equal(threadSlice(), EVENT_LOOP_SLICE_NS);
    } finally {
      // 0: back to the kernel's default.
      assert.equal(setThreadSlice(0), before);
    }
  },
});
