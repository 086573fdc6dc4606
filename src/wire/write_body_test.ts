/**
 * Unit tests of the body pump (`write_body.ts`) with an in-memory body and connection: chunks
 * written in order, wrong lengths and failed pulls refused (the body cancelled), the member's
 * answer and the response timeout stopping the upload.
 */

import assert from "node:assert/strict";
import { type PulledBody, pumpBody, type Uploading } from "./mod.ts";

class Failure extends Error {
  constructor(message: string, readonly timeout: boolean) {
    super(message);
  }
}
const clientError = (m: string, _cause?: unknown, timeout = false) => new Failure(m, timeout);

/** A body of the given chunks; counts cancels. */
function body(chunks: (string | Error)[]): PulledBody & { cancelled: number } {
  const queue = [...chunks];
  return {
    cancelled: 0,
    read() {
      const c = queue.shift();
      if (c === undefined) return Promise.resolve(null);
      if (c instanceof Error) return Promise.reject(c);
      return Promise.resolve(new TextEncoder().encode(c));
    },
    cancel() {
      this.cancelled++;
    },
  };
}

function conn(): Uploading<PulledBody> & { timedOut: boolean; stopUpload: boolean } {
  return { upload: null, timedOut: false, stopUpload: false };
}

Deno.test("pumpBody writes each non-empty chunk in order and returns the length", async () => {
  const written: string[] = [];
  const c = conn();
  const b = body(["ab", "", "cde"]);
  const n = await pumpBody(c, b, {
    length: 5,
    write: (x) => Promise.resolve(void written.push(new TextDecoder().decode(x))),
    clientError,
  });
  assert.equal(n, 5);
  assert.deepEqual(written, ["ab", "cde"]);
  assert.equal(b.cancelled, 0);
  assert.equal(c.upload, null);
});

Deno.test("pumpBody refuses a body longer or shorter than its length, and cancels it", async () => {
  const write = () => Promise.resolve();
  for (
    const [chunks, length, message] of [
      [["abc"], 2, "request body longer than its Content-Length 2"],
      [["abc"], 4, "request body ended after 3 of 4 bytes"],
      [[new Error("boom")], -1, "reading the request body failed"],
    ] as const
  ) {
    const b = body([...chunks]);
    await assert.rejects(pumpBody(conn(), b, { length, write, clientError }), { message });
    assert.equal(b.cancelled, 1);
  }
});

Deno.test("pumpBody stops on the member's answer and blames a timeout", async () => {
  const write = () => Promise.resolve();
  const stopped = conn();
  stopped.stopUpload = true;
  await assert.rejects(pumpBody(stopped, body(["a"]), { length: -1, write, clientError }), {
    message: "upload stopped: the member has answered",
  });
  const late = conn();
  late.timedOut = true;
  const err = await pumpBody(late, body(["a"]), { length: -1, write, clientError }).catch((e) => e);
  assert.ok(err instanceof Failure && err.timeout);
  assert.equal(err.message, "request body still arriving at the response timeout");
});
