/**
 * Unit tests of the one chunk framer (`write_chunked.ts`): a small chunk copied with its CRLF,
 * a large one's CRLF owed to the next size line or to the last chunk.
 */

import assert from "node:assert/strict";
import { ChunkFramer, FRAME_OVERHEAD } from "./mod.ts";

const text = (b: Uint8Array) => String.fromCharCode(...b);

Deno.test("ChunkFramer copies a small chunk behind its size line, with its CRLF", () => {
  const f = new ChunkFramer();
  const out = new Uint8Array(64);
  const n = f.frame(new TextEncoder().encode("hello world"), out, true);
  assert.equal(text(out.subarray(0, n)), "b\r\nhello world\r\n");
  assert.equal(text(f.last()), "0\r\n\r\n");
});

Deno.test("ChunkFramer owes a large chunk's CRLF to the next size line or the last chunk", () => {
  const f = new ChunkFramer();
  const out = new Uint8Array(FRAME_OVERHEAD);
  const big = new Uint8Array(0x12345);
  assert.equal(text(out.subarray(0, f.frame(big, out, false))), "12345\r\n");
  assert.equal(text(out.subarray(0, f.frame(big, out, false))), "\r\n12345\r\n");
  assert.equal(text(f.last()), "\r\n0\r\n\r\n");
  const g = new ChunkFramer();
  g.frame(big, out, false);
  const small = new Uint8Array(64);
  assert.equal(
    text(small.subarray(0, g.frame(Uint8Array.of(0x41), small, true))),
    "\r\n1\r\nA\r\n",
  );
  assert.equal(text(g.last()), "0\r\n\r\n");
});
