/**
 * The client's request body on its way to a member. Failures that are the client's (too large,
 * aborted, stalled past `body_read_timeout`) are recorded here so the proxy can answer
 * 413/400/408 without blaming the member.
 */
import { type BodyPull, type Expirable, watchdog } from "../http1/mod.ts";

/** Bodies up to this size are kept in memory when a retry is possible (spec: 64 KiB). */
export const REPLAY_LIMIT = 64 * 1024;

export type ClientBodyFailure = "too_large" | "aborted" | "stalled" | null;

/**
 * Counts and caps an upload pulled chunk by chunk; fails the read when the cap is passed or
 * when no chunk arrives within `gap` ms.
 */
export class ClientBody implements BodyPull, Expirable {
  failure: ClientBodyFailure = null;
  done = false;
  bytes = 0;
  expiresAt = 0;

  constructor(
    private readonly source: BodyPull,
    private readonly max: number,
    /** Longest wait for a chunk in ms (`body_read_timeout`); 0 (default): none. */
    private readonly gap = 0,
  ) {}

  async read(): Promise<Uint8Array | null> {
    const gap = this.gap;
    if (gap > 0) watchdog.arm(this, gap);
    let chunk: Uint8Array | null;
    try {
      chunk = await this.source.read();
    } catch (err) {
      if (gap > 0) watchdog.disarm(this);
      if (this.failure === null) this.failure = "aborted";
      throw err;
    }
    if (gap > 0) watchdog.disarm(this);
    if (this.failure === "stalled") throw new Error("request body stalled");
    if (chunk === null) {
      this.done = true;
      return null;
    }
    this.bytes += chunk.length;
    if (this.bytes > this.max) {
      this.failure = "too_large";
      this.source.cancel();
      throw new Error("request body too large");
    }
    return chunk;
  }

  cancel(): void {
    if (this.gap > 0) watchdog.disarm(this);
    this.source.cancel();
  }

  /** No chunk within `gap`: the upload is given up. */
  expire(): void {
    this.failure = "stalled";
    this.source.cancel();
  }
}

/** Reads all of `body` into one array (for a member that needs the length first). */
export async function readWhole(body: BodyPull): Promise<Uint8Array<ArrayBuffer>> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const chunk = await body.read();
    if (chunk === null) break;
    // A chunk is only the caller's until the next read.
    parts.push(chunk.slice());
    total += chunk.length;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The wait for a small body, bounded by a deadline and a gap between chunks. */
class SmallRead implements Expirable {
  expiresAt = 0;
  /** The gap between chunks ran out. */
  stalled = false;
  /** The deadline for the whole body ran out. */
  late = false;
  constructor(readonly body: BodyPull) {}
  expire(): void {
    this.stalled = true;
    this.body.cancel();
  }
}

function late(r: SmallRead): void {
  r.late = true;
  r.body.cancel();
}

/**
 * Reads a whole body of known, small length into one array (for replay on retries), within
 * `timeoutMs` (0: no limit), so that a stalled upload cannot hold the request forever, and
 * with at most `gapMs` (0: no limit) between chunks. A body that reads straight into a buffer
 * (`readInto`) is copied once at most. Returns the bytes, or the client's failure (`timeout`
 * when the time ran out, `stalled` when a chunk was late).
 */
export async function readSmallBody(
  body: BodyPull,
  length: number,
  timeoutMs = 0,
  gapMs = 0,
): Promise<Uint8Array<ArrayBuffer> | ClientBodyFailure | "timeout"> {
  const out = new Uint8Array(length);
  let off = 0;
  const r = new SmallRead(body);
  const timer = timeoutMs > 0 ? setTimeout(late, timeoutMs, r) : undefined;
  try {
    for (;;) {
      if (gapMs > 0) watchdog.arm(r, gapMs);
      if (body.readInto !== undefined) {
        // The body's own framing bounds it to `length`.
        const n = off < length ? await body.readInto(out.subarray(off)) : null;
        if (gapMs > 0) watchdog.disarm(r);
        if (r.stalled) return "stalled";
        if (r.late) return "timeout";
        if (n === null) break;
        off += n;
        continue;
      }
      const chunk = await body.read();
      if (gapMs > 0) watchdog.disarm(r);
      if (r.stalled) return "stalled";
      if (r.late) return "timeout";
      if (chunk === null) break;
      if (off + chunk.length > length) {
        body.cancel();
        return "too_large";
      }
      out.set(chunk, off);
      off += chunk.length;
    }
  } catch {
    return r.late ? "timeout" : r.stalled ? "stalled" : "aborted";
  } finally {
    clearTimeout(timer);
    if (gapMs > 0) watchdog.disarm(r);
  }
  if (off === length) return out;
  return r.late ? "timeout" : "aborted";
}
