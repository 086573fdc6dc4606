import assert from "node:assert/strict";
import { fdGrowth } from "./soak.ts";

const at = (fds: number, rssMiB: number) => ({ fds, rssKiB: rssMiB * 1024 });

Deno.test("soak: descriptors are judged only after member connections expired", () => {
  const samples = [at(27, 63.1), at(96, 147), at(26, 77.7)];
  assert.equal(fdGrowth(samples, 0), null);
  assert.equal(fdGrowth(samples, 65), null);
  assert.equal(fdGrowth([at(27, 63)], 70), null);
  assert.deepEqual(fdGrowth(samples, 66), {
    grew: false,
    line: "open fds: 27 idle at the start, 26 after 66 s idle at the end: no growth; " +
      "RSS 63.1 -> 77.7 MiB",
  });
  const leak = fdGrowth([at(27, 63), at(96, 147), at(31, 80)], 70);
  assert.equal(leak?.grew, true);
  assert.match(leak!.line, /grew by 4 \(a leak\)/);
});
