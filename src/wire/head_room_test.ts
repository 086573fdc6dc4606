import assert from "node:assert/strict";
import { claimHeadRoom, giveHeadRoom, HEAD_ROOM, withHeadRoom } from "./head_room.ts";

Deno.test("claimHeadRoom gives head and body as one view, once", () => {
  const body = withHeadRoom(5);
  body.set([1, 2, 3, 4, 5]);
  const all = claimHeadRoom(body, 3)!;
  assert.equal(all.length, 8);
  all.set([9, 9, 9]);
  assert.deepEqual([...all], [9, 9, 9, 1, 2, 3, 4, 5]);
  assert.deepEqual([...body], [1, 2, 3, 4, 5]);
  assert.equal(claimHeadRoom(body, 3), null);
});

Deno.test("claimHeadRoom refuses views, plain arrays and heads over HEAD_ROOM", () => {
  const body = withHeadRoom(10);
  assert.equal(claimHeadRoom(body.subarray(2), 3), null, "bytes before a view are the body's");
  assert.equal(claimHeadRoom(body.subarray(0, 5), 3), null, "bytes after a view are the body's");
  assert.equal(claimHeadRoom(new Uint8Array(10), 3), null);
  assert.equal(claimHeadRoom(body, HEAD_ROOM + 1), null);
  assert.notEqual(claimHeadRoom(body, HEAD_ROOM), null);
});

Deno.test("giveHeadRoom: a written buffer serves the next body; one never given back does not", () => {
  const a = withHeadRoom(40_000);
  const claimed = claimHeadRoom(a, 100)!;
  giveHeadRoom(claimed);
  const b = withHeadRoom(50_000);
  assert.ok(b.buffer === a.buffer, "reused");
  assert.notEqual(claimHeadRoom(b, 10), null, "claimable again once handed out again");
  // b was claimed but not given back: the next body gets another buffer.
  const c = withHeadRoom(1000);
  assert.ok(c.buffer !== b.buffer);
  // A body past the largest class has a buffer of its own, never kept.
  const big = withHeadRoom(300_000);
  assert.equal(big.buffer.byteLength, HEAD_ROOM + 300_000);
  giveHeadRoom(claimHeadRoom(big, 10)!);
  assert.ok(withHeadRoom(300_000).buffer !== big.buffer);
});
