/**
 * A client's request body read from its connection: Content-Length or chunked, handed on as
 * the chunks the socket gives (a copy only of bytes that arrived with the head), pulled one
 * at a time so that a slow member slows the client down. `Expect: 100-continue` is answered
 * when the body is first pulled. Read it with `read`/`readInto` (no stream), or as a stream
 * made on demand: one or the other.
 */

import { BODY_SIZE, giveBodyBuffer, takeBodyBuffer } from "./buffer_pool.ts";
import { ChunkedDecoder } from "../wire/mod.ts";
import { REQUEST_CHUNKED } from "./read_chunked_request.ts";
import { HeadError } from "./parse_request_head.ts";

/** The connection side the body reads from: its buffer and a way to get more bytes. */
export interface BodyInput {
  buf: Uint8Array;
  start: number;
  end: number;
  /** Reads more bytes after `end` (making room first); false at end of input. */
  fill(): Promise<boolean>;
  /** Reads straight into `into` (nothing buffered); the bytes read, or null at end of input. */
  readDirect(into: Uint8Array): Promise<number | null>;
  /** Writes `100 Continue`. */
  sendContinue(): Promise<void>;
}

/** Largest chunk read straight from the socket for a Content-Length body. */
const DIRECT_READ = 65536;

/** Why a body ended early: the client closed, or its chunked framing was broken. */
export class BodyError extends Error {
  override name = "BodyError";
}

function cancelled(): BodyError {
  return new BodyError("request body cancelled");
}

/** The body of one request; `stream()` gives the `ReadableStream` handlers read. */
export class RequestBody implements UnderlyingDefaultSource<Uint8Array> {
  /** All of the body was read. */
  complete = false;
  /** Reading failed (the connection cannot carry another request). */
  failed = false;
  private remaining: number;
  private readonly chunks: ChunkedDecoder | null;
  private continued: boolean;
  private made: ReadableStream<Uint8Array> | null = null;
  /** Read without a stream (`read`, `readInto`). */
  private pulled = false;
  /** Rejects the pending `read`/`readInto` (`cancel` settles it at once). */
  private abort: ((err: BodyError) => void) | null = null;
  /**
   * Where `read` puts its chunks (pooled, taken at the first chunk): each chunk is a view of
   * it, valid until the next `read`. It goes back to the pool at the clean end only (a read
   * may still be pending into it after a cancel).
   */
  private space: Uint8Array<ArrayBuffer> | null = null;

  constructor(
    private readonly input: BodyInput,
    /** Content-Length, or -1 for chunked. */
    readonly length: number,
    expectContinue: boolean,
  ) {
    this.remaining = length;
    this.chunks = length < 0 ? new ChunkedDecoder(REQUEST_CHUNKED) : null;
    this.continued = !expectContinue;
  }

  /** The body as a stream (made once). */
  stream(): ReadableStream<Uint8Array> {
    return this.made ??= new ReadableStream(this, { highWaterMark: 0 });
  }

  /** Whether any of it was asked for. */
  get touched(): boolean {
    return this.made !== null || this.pulled;
  }

  /** Whether it is read as a stream (then only through it). */
  get streamed(): boolean {
    return this.made !== null;
  }

  /**
   * The next chunk, or null at the end; a `BodyError` or a framing error when it broke. The
   * chunk is a view of a buffer the next `read` reuses (nothing allocated per chunk, one copy
   * at most). `cancel` settles a pending read at once with a `BodyError`.
   */
  read(): Promise<Uint8Array | null> {
    if (this.failed) return Promise.reject(cancelled());
    this.pulled = true;
    if (this.chunks === null && this.continued && this.remaining > 0) {
      // Bytes already buffered: no wait.
      const input = this.input;
      const have = input.end - input.start;
      if (have > 0) return Promise.resolve(this.lentBuffered(have));
    }
    return this.abortable(this.next(true));
  }

  /** `have` buffered bytes of a Content-Length body (or as many as fit) as a lent chunk. */
  private lentBuffered(have: number): Uint8Array {
    const input = this.input;
    const space = this.space ??= takeBodyBuffer();
    const n = Math.min(have, this.remaining, space.length);
    space.set(input.buf.subarray(input.start, input.start + n));
    input.start += n;
    this.taken(n);
    return space.subarray(0, n);
  }

  /** The body was read to its clean end: its buffer goes back. */
  private ended(): null {
    const space = this.space;
    if (space !== null) {
      this.space = null;
      giveBodyBuffer(space);
    }
    return null;
  }

  /**
   * Reads the next bytes of a Content-Length body into `into` (buffered bytes copied once,
   * the rest read straight from the socket): their count, or null at the end.
   */
  readInto(into: Uint8Array): Promise<number | null> {
    if (this.failed) return Promise.reject(cancelled());
    if (this.chunks !== null) throw new TypeError("readInto needs a Content-Length body");
    this.pulled = true;
    if (this.remaining === 0) {
      this.complete = true;
      return Promise.resolve(null);
    }
    const input = this.input;
    const have = input.end - input.start;
    if (have > 0 && this.continued) {
      const n = Math.min(have, this.remaining, into.length);
      into.set(input.buf.subarray(input.start, input.start + n));
      input.start += n;
      this.taken(n);
      return Promise.resolve(n);
    }
    return this.abortable(this.readDirectInto(into));
  }

  private async readDirectInto(into: Uint8Array): Promise<number | null> {
    const input = this.input;
    if (!this.continued) {
      this.continued = true;
      if (input.start === input.end) await input.sendContinue();
      if (input.start < input.end) return this.readInto(into);
    }
    const want = Math.min(this.remaining, into.length);
    const n = await input.readDirect(want === into.length ? into : into.subarray(0, want));
    if (n === null) throw new BodyError("client closed the connection inside the body");
    this.taken(n);
    return n;
  }

  /** `p`, settled early with a `BodyError` when `cancel` comes first. */
  private abortable<T>(p: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.abort = reject;
      p.then(resolve, (err) => {
        this.failed = true;
        reject(err);
      });
    });
  }

  async pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    try {
      const chunk = await this.next();
      if (chunk === null) controller.close();
      else controller.enqueue(chunk);
    } catch (err) {
      this.failed = true;
      controller.error(err);
    }
  }

  /** Drops the rest: the connection cannot carry another request. */
  cancel(): void {
    if (!this.complete) this.failed = true;
    const abort = this.abort;
    if (abort !== null) {
      this.abort = null;
      abort(cancelled());
    }
  }

  /**
   * Drops the rest of a body nobody read when all of it is already buffered (a small upload
   * answered without reading it): the connection can then carry the next request. Returns
   * whether the body is complete now.
   */
  skipBuffered(): boolean {
    if (this.complete || this.touched) return this.complete;
    const input = this.input;
    if (this.chunks === null) {
      if (input.end - input.start < this.remaining) return false;
      input.start += this.remaining;
      this.taken(this.remaining);
      return true;
    }
    const d = this.chunks;
    let pos = input.start;
    try {
      while (pos < input.end && !d.done) pos = d.decode(input.buf, pos, input.end);
    } catch {
      this.failed = true;
      return false;
    }
    if (!d.done) {
      // Not all there: the caller closes; the decoder state no longer matters.
      return false;
    }
    input.start = pos;
    this.complete = true;
    return true;
  }

  /**
   * The next chunk of the body, or null at its end: with `lend`, a view of the body's own
   * buffer (see `read`), else an array the caller keeps (for the stream).
   */
  async next(lend = false): Promise<Uint8Array | null> {
    if (this.complete) return lend ? this.ended() : null;
    const input = this.input;
    if (!this.continued) {
      this.continued = true;
      if (input.start === input.end) await input.sendContinue();
    }
    if (this.chunks === null) {
      if (this.remaining === 0) {
        this.complete = true;
        return lend ? this.ended() : null;
      }
      const have = input.end - input.start;
      if (have > 0) {
        if (lend) return this.lentBuffered(have);
        const n = Math.min(have, this.remaining);
        const chunk = input.buf.slice(input.start, input.start + n);
        input.start += n;
        this.taken(n);
        return chunk;
      }
      let into: Uint8Array;
      if (lend) {
        const space = this.space ??= takeBodyBuffer();
        into = this.remaining < space.length ? space.subarray(0, this.remaining) : space;
      } else into = new Uint8Array(Math.min(this.remaining, DIRECT_READ));
      const n = await input.readDirect(into);
      if (n === null) throw new BodyError("client closed the connection inside the body");
      this.taken(n);
      return into.subarray(0, n);
    }
    const d = this.chunks;
    for (;;) {
      if (input.start < input.end) {
        input.start = d.decode(input.buf, input.start, input.end);
        const span = d.spanEnd - d.spanStart;
        if (span > 0) {
          if (!lend || span > BODY_SIZE) return input.buf.slice(d.spanStart, d.spanEnd);
          const space = this.space ??= takeBodyBuffer();
          space.set(input.buf.subarray(d.spanStart, d.spanEnd));
          return space.subarray(0, span);
        }
        if (d.done) {
          this.complete = true;
          return lend ? this.ended() : null;
        }
        continue;
      }
      if (!(await input.fill())) {
        throw new BodyError("client closed the connection inside the body");
      }
    }
  }

  private taken(n: number): void {
    this.remaining -= n;
    if (this.remaining === 0) this.complete = true;
  }
}

/** Whether `err` is the client's broken framing (then answered with 400). */
export function isFramingError(err: unknown): boolean {
  return err instanceof HeadError;
}
