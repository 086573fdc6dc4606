import assert from "node:assert/strict";
import {
  giveBuffer,
  giveSmall,
  POOLED_SIZE,
  SMALL_SIZE,
  takeBuffer,
  takeSmall,
} from "./buffer_pool.ts";

Deno.test("takeSmall carves views of one slab that never overlap, and reuses what comes back", () => {
  const taken = Array.from({ length: 80 }, () => takeSmall());
  for (const b of taken) assert.equal(b.length, SMALL_SIZE);
  // 64 views per 64 KiB slab: 80 buffers need two slabs, not 80 ArrayBuffers.
  assert.ok(new Set(taken.map((b) => b.buffer)).size <= 3);
  const spans = taken.map((b) => [b.buffer, b.byteOffset] as const);
  const keys = new Set(
    spans.map(([buf, at]) => `${taken.findIndex((t) => t.buffer === buf)}:${at}`),
  );
  assert.equal(keys.size, taken.length, "no two buffers share bytes");
  const last = taken.pop()!;
  giveSmall(last);
  assert.equal(takeSmall(), last);
  for (const b of taken) giveSmall(b);
});

Deno.test("takeBuffer reuses pooled buffers and ignores others", () => {
  const a = takeBuffer();
  assert.equal(a.length, POOLED_SIZE);
  giveBuffer(a);
  assert.equal(takeBuffer(), a);
  giveBuffer(new Uint8Array(10));
  assert.equal(takeBuffer().length, POOLED_SIZE);
});
