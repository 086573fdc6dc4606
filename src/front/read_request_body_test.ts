import assert from "node:assert/strict";
import { bytes, text } from "./_bytes.ts";
import { BodyError, type BodyInput, RequestBody } from "./read_request_body.ts";

/** A connection side fed from `parts`: the first is buffered, the rest arrive by reads. */
class Input implements BodyInput {
  buf: Uint8Array;
  start = 0;
  end: number;
  continues = 0;
  direct = 0;
  /** A read that never ends (the client stalls) once `parts` run out. */
  hang = false;
  constructor(first: string, private readonly parts: string[]) {
    this.buf = new Uint8Array(256);
    this.buf.set(bytes(first));
    this.end = first.length;
  }
  next(): Promise<Uint8Array | null> {
    const p = this.parts.shift();
    if (p === undefined) return this.hang ? new Promise(() => {}) : Promise.resolve(null);
    return Promise.resolve(bytes(p));
  }
  async fill(): Promise<boolean> {
    if (this.start === this.end) this.start = this.end = 0;
    const b = await this.next();
    if (b === null) return false;
    this.buf.set(b, this.end);
    this.end += b.length;
    return true;
  }
  async readDirect(into: Uint8Array): Promise<number | null> {
    this.direct++;
    const b = await this.next();
    if (b === null) return null;
    const n = Math.min(b.length, into.length);
    into.set(b.subarray(0, n));
    if (n < b.length) this.parts.unshift(text(b.subarray(n)));
    return n;
  }
  sendContinue(): Promise<void> {
    this.continues++;
    return Promise.resolve();
  }
}

async function drain(body: RequestBody): Promise<string[]> {
  const out: string[] = [];
  for (;;) {
    const c = await body.read();
    if (c === null) return out;
    out.push(text(c));
  }
}

Deno.test("RequestBody.read gives buffered bytes, then what the socket brings, then null", async () => {
  const input = new Input("hel", ["lo ", "world", "NEXT"]);
  const body = new RequestBody(input, 11, false);
  assert.deepEqual(await drain(body), ["hel", "lo ", "world"]);
  assert.equal(body.complete, true);
  assert.equal(body.touched, true);
  assert.equal(body.streamed, false);
  assert.equal(input.direct, 2);
});

Deno.test("RequestBody.read decodes a chunked body and leaves the next request buffered", async () => {
  const input = new Input("3\r\nabc\r\n", ["2;x=1\r\nde\r\n0\r\nT: 1\r\n\r\nGET"]);
  const body = new RequestBody(input, -1, false);
  assert.deepEqual(await drain(body), ["abc", "de"]);
  assert.equal(body.complete, true);
  assert.equal(text(input.buf.subarray(input.start, input.end)), "GET");
});

Deno.test("RequestBody.readInto fills one buffer: buffered bytes copied, the rest read into it", async () => {
  const input = new Input("ab", ["cdef", "gh"]);
  const body = new RequestBody(input, 8, true);
  const out = new Uint8Array(8);
  let off = 0;
  for (;;) {
    const n = await body.readInto(out.subarray(off));
    if (n === null) break;
    off += n;
  }
  assert.equal(text(out), "abcdefgh");
  assert.equal(body.complete, true);
  // Bytes were buffered: no 100 Continue is owed.
  assert.equal(input.continues, 0);
  assert.equal(input.direct, 2);
});

Deno.test("RequestBody: 100 Continue goes out at the first read when nothing was sent yet", async () => {
  const input = new Input("", ["xy"]);
  const body = new RequestBody(input, 2, true);
  assert.deepEqual(await drain(body), ["xy"]);
  assert.equal(input.continues, 1);
});

Deno.test("RequestBody.cancel settles a pending read at once and fails the body", async () => {
  const input = new Input("", []);
  input.hang = true;
  const body = new RequestBody(input, 10, false);
  const pending = body.read();
  body.cancel();
  await assert.rejects(pending, BodyError);
  assert.equal(body.failed, true);
  await assert.rejects(body.read(), BodyError);
  // A body read without a stream is never skipped as if nobody had read it.
  assert.equal(body.skipBuffered(), false);
});

Deno.test("RequestBody.read fails when the client closes inside the body", async () => {
  const body = new RequestBody(new Input("ab", []), 5, false);
  assert.equal(text((await body.read())!), "ab");
  await assert.rejects(body.read(), BodyError);
  assert.equal(body.failed, true);
});

Deno.test("RequestBody.read lends views of one pooled buffer, returned at the clean end", async () => {
  const input = new Input("abc", ["defg", "hi"]);
  const body = new RequestBody(input, 9, false);
  const a = await body.read();
  const b = await body.read();
  const c = await body.read();
  assert.equal(a!.buffer, b!.buffer);
  assert.equal(b!.buffer, c!.buffer);
  assert.equal(text(c!), "hi");
  assert.equal(await body.read(), null);
  // Back in the pool: the next body gets the same buffer.
  const next = new RequestBody(new Input("xy", []), 2, false);
  assert.equal((await next.read())!.buffer, a!.buffer);
});

Deno.test("RequestBody: the stream's chunks are the reader's to keep", async () => {
  const body = new RequestBody(new Input("abc", ["def"]), 6, false);
  const reader = body.stream().getReader();
  const first = (await reader.read()).value!;
  const second = (await reader.read()).value!;
  assert.notEqual(first.buffer, second.buffer);
  assert.equal(text(first) + text(second), "abcdef");
});
