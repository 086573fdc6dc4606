import assert from "node:assert/strict";
import { parseRange } from "./static.ts";

Deno.test("parseRange resolves single byte ranges against the size", () => {
  assert.deepEqual(parseRange("bytes=0-0", 10), { start: 0, end: 0 });
  assert.deepEqual(parseRange("bytes=2-5", 10), { start: 2, end: 5 });
  assert.deepEqual(parseRange("bytes=2-", 10), { start: 2, end: 9 });
  assert.deepEqual(parseRange("bytes=5-100", 10), { start: 5, end: 9 }, "end clamped");
  assert.deepEqual(parseRange("bytes=-3", 10), { start: 7, end: 9 }, "suffix");
  assert.deepEqual(parseRange("bytes=-30", 10), { start: 0, end: 9 }, "suffix over the size");
  assert.deepEqual(parseRange(" bytes=1-2 ", 10), { start: 1, end: 2 });
});

Deno.test("parseRange ignores what it does not serve and refuses what does not exist", () => {
  for (
    const h of [
      null,
      "bytes=-",
      "bytes=1-2,4-5",
      "items=0-1",
      "bytes=a-b",
      "bytes=5-2",
      "bytes 0-1",
    ]
  ) {
    assert.equal(parseRange(h, 10), null, String(h));
  }
  assert.equal(parseRange("bytes=10-", 10), "unsatisfiable");
  assert.equal(parseRange("bytes=10-20", 10), "unsatisfiable");
  assert.equal(parseRange("bytes=-0", 10), "unsatisfiable");
  assert.equal(parseRange("bytes=0-", 0), "unsatisfiable", "an empty file has no byte 0");
  assert.equal(parseRange("bytes=-5", 0), "unsatisfiable");
});
