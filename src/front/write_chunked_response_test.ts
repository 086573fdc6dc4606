import assert from "node:assert/strict";
import { text } from "./_bytes.ts";
import { ChunkedWriter, COPY_LIMIT } from "./write_chunked_response.ts";

/** Records each write; takes at most `max` bytes per write. */
class Sink {
  writes: string[] = [];
  constructor(private readonly max = Infinity) {}
  write(p: Uint8Array): Promise<number> {
    const n = Math.min(p.length, this.max);
    this.writes.push(text(p.subarray(0, n)));
    return Promise.resolve(n);
  }
}

Deno.test("ChunkedWriter: a small chunk is one write with its size line and CRLF", async () => {
  const sink = new Sink();
  const w = new ChunkedWriter(sink);
  await w.write(new TextEncoder().encode("hello"));
  await w.write(new Uint8Array(0));
  await w.write(new TextEncoder().encode("x".repeat(26)));
  await w.end();
  assert.deepEqual(sink.writes, [
    "5\r\nhello\r\n",
    "1a\r\n" + "x".repeat(26) + "\r\n",
    "0\r\n\r\n",
  ]);
});

Deno.test("ChunkedWriter: a large chunk is two writes, never copied; its CRLF goes with the next line", async () => {
  const sink = new Sink();
  const w = new ChunkedWriter(sink);
  const big = new Uint8Array(COPY_LIMIT + 1).fill(0x61);
  await w.write(big);
  await w.write(big);
  await w.write(new TextEncoder().encode("z"));
  await w.end();
  const size = (COPY_LIMIT + 1).toString(16);
  assert.deepEqual(sink.writes, [
    size + "\r\n",
    text(big),
    "\r\n" + size + "\r\n",
    text(big),
    "\r\n1\r\nz\r\n",
    "0\r\n\r\n",
  ]);
  const last = new Sink();
  const l = new ChunkedWriter(last);
  await l.write(big);
  await l.end();
  assert.equal(last.writes.at(-1), "\r\n0\r\n\r\n");
});

Deno.test("ChunkedWriter finishes writes the socket took in part", async () => {
  const sink = new Sink(3);
  const w = new ChunkedWriter(sink);
  await w.write(new TextEncoder().encode("abcdef"));
  await w.end();
  assert.equal(sink.writes.join(""), "6\r\nabcdef\r\n0\r\n\r\n");
});
