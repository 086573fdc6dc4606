import assert from "node:assert/strict";
import { asPull, StreamPull } from "./stream_pull.ts";

const enc = new TextEncoder();

Deno.test("StreamPull reads a stream chunk by chunk, then null", async () => {
  const pull = new StreamPull(
    new ReadableStream({
      start(c) {
        c.enqueue(enc.encode("a"));
        c.enqueue(enc.encode("bc"));
        c.close();
      },
    }),
  );
  assert.deepEqual(await pull.read(), enc.encode("a"));
  assert.deepEqual(await pull.read(), enc.encode("bc"));
  assert.equal(await pull.read(), null);
});

Deno.test("StreamPull.cancel settles a pending read and cancels the stream", async () => {
  let cancelled = false;
  const pull = new StreamPull(new ReadableStream({ cancel: () => void (cancelled = true) }));
  const pending = pull.read();
  pull.cancel();
  assert.equal(await pending, null);
  assert.equal(cancelled, true);
});

Deno.test("asPull wraps streams only", () => {
  const bytes = enc.encode("x");
  assert.equal(asPull(bytes), bytes);
  assert.ok(asPull(new ReadableStream<Uint8Array>()) instanceof StreamPull);
});
