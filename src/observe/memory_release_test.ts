import assert from "node:assert/strict";
import { processReleaser } from "./memory_release.ts";

const MIB = 1024 * 1024;

function rss(): number {
  return Deno.memoryUsage().rss;
}

Deno.test("memory release: both parts are available under the test task's permissions", () => {
  // The test task grants --allow-ffi like the run task; on glibc Linux both parts must open.
  const parts = processReleaser().describe();
  assert.ok(parts.includes("gc"), `parts: ${parts}`);
  if (Deno.build.os === "linux") assert.ok(parts.includes("malloc_trim"), `parts: ${parts}`);
});

Deno.test("memory release: the pages of a heap that grew and emptied go back to the system", async () => {
  const releaser = processReleaser();
  releaser.release();
  const start = rss();
  // About 150 MiB of short-lived objects, 40 MiB alive at a time, as a burst of load leaves.
  let ring: unknown[] = new Array(400_000);
  for (let round = 0; round < 12; round++) {
    for (let i = 0; i < 200_000; i++) {
      ring[(round * 200_000 + i) % ring.length] = { n: i, s: "x" + i, a: [i, round] };
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  ring = [];
  const grown = rss();
  assert.ok(
    grown - start > 40 * MIB,
    `the heap did not grow: ${start >> 20} -> ${grown >> 20} MiB`,
  );
  releaser.release();
  const after = rss();
  // Without the release V8 keeps nearly all of it (measured: no drop at all).
  assert.ok(
    grown - after > (grown - start) / 2,
    `RSS ${start >> 20} MiB at the start, ${grown >> 20} grown, ${after >> 20} after release`,
  );
  assert.equal(ring.length, 0);
});
