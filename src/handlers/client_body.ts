/**
 * The client's request body on its way to a member. Failures that are the client's (too large,
 * aborted) are recorded here so the proxy can answer 413/400 without blaming the member.
 */

/** Bodies up to this size are kept in memory when a retry is possible (spec: 64 KiB). */
export const REPLAY_LIMIT = 64 * 1024;

export type ClientBodyFailure = "too_large" | "aborted" | null;

/** Counts and caps a streamed upload; errors the stream when the cap is passed. */
export class ClientBody implements UnderlyingDefaultSource<Uint8Array> {
  failure: ClientBodyFailure = null;
  done = false;
  bytes = 0;
  private reader: ReadableStreamDefaultReader<Uint8Array> | null = null;

  constructor(private readonly source: ReadableStream<Uint8Array>, private readonly max: number) {}

  stream(): ReadableStream<Uint8Array> {
    return new ReadableStream(this, { highWaterMark: 0 });
  }

  async pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    this.reader ??= this.source.getReader();
    let r: ReadableStreamReadResult<Uint8Array>;
    try {
      r = await this.reader.read();
    } catch (err) {
      this.failure = "aborted";
      controller.error(err);
      return;
    }
    if (r.done) {
      this.done = true;
      controller.close();
      return;
    }
    this.bytes += r.value.length;
    if (this.bytes > this.max) {
      this.failure = "too_large";
      this.reader.cancel().catch(() => {});
      controller.error(new Error("request body too large"));
      return;
    }
    controller.enqueue(r.value);
  }

  cancel(reason: unknown): void {
    (this.reader ?? this.source).cancel(reason).catch(() => {});
  }
}

/**
 * Reads a whole body of known, small length into memory (for replay on retries).
 * Returns the bytes, or the client's failure.
 */
export async function readSmallBody(
  body: ReadableStream<Uint8Array>,
  length: number,
): Promise<Uint8Array<ArrayBuffer> | ClientBodyFailure> {
  const out = new Uint8Array(length);
  let off = 0;
  const reader = body.getReader();
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      if (off + r.value.length > length) {
        reader.cancel().catch(() => {});
        return "too_large";
      }
      out.set(r.value, off);
      off += r.value.length;
    }
  } catch {
    return "aborted";
  }
  return off === length ? out : "aborted";
}
