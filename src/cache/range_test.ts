import assert from "node:assert/strict";
import { parseRange } from "./range.ts";

Deno.test("parseRange understands one byte range", () => {
  assert.deepEqual(parseRange("bytes=0-4", 10), { start: 0, end: 4 });
  assert.deepEqual(parseRange("bytes=5-", 10), { start: 5, end: 9 });
  assert.deepEqual(parseRange("bytes=-3", 10), { start: 7, end: 9 });
  assert.deepEqual(parseRange("bytes=-30", 10), { start: 0, end: 9 });
  assert.deepEqual(parseRange("bytes=8-100", 10), { start: 8, end: 9 });
});

Deno.test("parseRange: unsatisfiable and not understood", () => {
  assert.equal(parseRange("bytes=10-", 10), "unsatisfiable");
  assert.equal(parseRange("bytes=-0", 10), "unsatisfiable");
  assert.equal(parseRange("bytes=0-1,3-4", 10), null);
  assert.equal(parseRange("items=0-1", 10), null);
  assert.equal(parseRange("bytes=4-2", 10), null);
  assert.equal(parseRange("bytes=-", 10), null);
});
