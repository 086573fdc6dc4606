/**
 * The client's request body on its way to a member. Failures that are the client's (too large,
 * aborted, stalled past `body_read_timeout`) are recorded here so the proxy can answer
 * 413/400/408 without blaming the member.
 */
import { type Expirable, watchdog } from "../http1/watchdog.ts";

/** Bodies up to this size are kept in memory when a retry is possible (spec: 64 KiB). */
export const REPLAY_LIMIT = 64 * 1024;

export type ClientBodyFailure = "too_large" | "aborted" | "stalled" | null;

/**
 * Counts and caps a streamed upload; errors the stream when the cap is passed or when no chunk
 * arrives within `gap` ms.
 */
export class ClientBody implements UnderlyingDefaultSource<Uint8Array>, Expirable {
  failure: ClientBodyFailure = null;
  done = false;
  bytes = 0;
  expiresAt = 0;
  private reader: ReadableStreamDefaultReader<Uint8Array> | null = null;

  constructor(
    private readonly source: ReadableStream<Uint8Array>,
    private readonly max: number,
    /** Longest wait for a chunk in ms (`body_read_timeout`); 0 (default): none. */
    private readonly gap = 0,
  ) {}

  stream(): ReadableStream<Uint8Array> {
    return new ReadableStream(this, { highWaterMark: 0 });
  }

  async pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    this.reader ??= this.source.getReader();
    let r: ReadableStreamReadResult<Uint8Array>;
    if (this.gap > 0) watchdog.arm(this, this.gap);
    try {
      r = await this.reader.read();
    } catch (err) {
      if (this.gap > 0) watchdog.disarm(this);
      if (this.failure === null) this.failure = "aborted";
      controller.error(err);
      return;
    }
    if (this.gap > 0) watchdog.disarm(this);
    if (this.failure === "stalled") {
      controller.error(new Error("request body stalled"));
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
    if (this.gap > 0) watchdog.disarm(this);
    (this.reader ?? this.source).cancel(reason).catch(() => {});
  }

  /** No chunk within `gap`: the upload is given up. */
  expire(): void {
    this.failure = "stalled";
    this.reader?.cancel().catch(() => {});
  }
}

/** The wait for one chunk of a small body, bounded by `body_read_timeout`. */
class ChunkWait implements Expirable {
  expiresAt = 0;
  expired = false;
  constructor(readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}
  expire(): void {
    this.expired = true;
    this.reader.cancel().catch(() => {});
  }
}

/** A small-body read and whether its time ran out. */
class ReadDeadline {
  expired = false;
  constructor(readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}
}

function expire(d: ReadDeadline): void {
  d.expired = true;
  d.reader.cancel().catch(() => {});
}

/**
 * Reads a whole body of known, small length into memory (for replay on retries), within
 * `timeoutMs` (0: no limit), so that a stalled upload cannot hold the request forever, and
 * with at most `gapMs` (0: no limit) between chunks. Returns the bytes, or the client's
 * failure (`timeout` when the time ran out, `stalled` when a chunk was late).
 */
export async function readSmallBody(
  body: ReadableStream<Uint8Array>,
  length: number,
  timeoutMs = 0,
  gapMs = 0,
): Promise<Uint8Array<ArrayBuffer> | ClientBodyFailure | "timeout"> {
  const out = new Uint8Array(length);
  let off = 0;
  const reader = body.getReader();
  const deadline = timeoutMs > 0 ? new ReadDeadline(reader) : null;
  const timer = deadline === null ? undefined : setTimeout(expire, timeoutMs, deadline);
  const wait = gapMs > 0 ? new ChunkWait(reader) : null;
  try {
    for (;;) {
      if (wait !== null) watchdog.arm(wait, gapMs);
      const r = await reader.read();
      if (wait !== null) watchdog.disarm(wait);
      if (wait?.expired) return "stalled";
      if (r.done) break;
      if (off + r.value.length > length) {
        reader.cancel().catch(() => {});
        return "too_large";
      }
      out.set(r.value, off);
      off += r.value.length;
    }
  } catch {
    return deadline?.expired ? "timeout" : wait?.expired ? "stalled" : "aborted";
  } finally {
    clearTimeout(timer);
    if (wait !== null) watchdog.disarm(wait);
  }
  if (off === length) return out;
  return deadline?.expired ? "timeout" : "aborted";
}
