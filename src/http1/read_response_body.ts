/**
 * The source behind a streamed response body. It pulls from the socket only when the consumer
 * reads (highWaterMark 0), returns the connection to its pool when the body ended cleanly and
 * keep-alive allows, and closes it on error or cancel.
 */

import { ChunkedDecoder } from "../wire/mod.ts";
import { RESPONSE_CHUNKED } from "./read_chunked_response.ts";
import type { ConnPool } from "./conn_pool.ts";
import type { Http1Conn } from "./member_conn.ts";
import type { BodyReader, Bytes, FinishListener } from "./types.ts";
import { ioError, malformed, UpstreamError } from "./upstream_error.ts";
import { giveView, takeView, VIEW_SIZE } from "./view_buffers.ts";
import { watchdog } from "./watchdog.ts";

/** Body delimited by Content-Length. */
export const BODY_LENGTH = 0;
/** Chunked body. */
export const BODY_CHUNKED = 1;
/** Body delimited by the member closing the connection. */
export const BODY_CLOSE = 2;

/** Largest read into a fresh chunk (`read`; `readView` reads up to `VIEW_SIZE`). */
const CHUNK = 65536;
/**
 * Most bytes of a Content-Length body still to come that are read and dropped when the client
 * goes away, so that the member's connection is kept rather than closed and opened again
 * (wrk cuts 64 answers of 1 MiB mid-body at the end of each run: 30-80 new member connections
 * per 1,000 requests of get-1m on a loaded machine).
 */
export const DRAIN_BYTES = 1 << 20;
/** Longest such drain (ms): a member slower than this loses its connection. */
export const DRAIN_MS = 1000;

type Controller = ReadableStreamDefaultController<Bytes>;

/**
 * One streamed response body; an object with methods rather than closures per response. The
 * front pulls it directly (`read`, `cancel`); everything else gets a `ReadableStream` made on
 * it (it is that stream's underlying source). Use one or the other, never both.
 */
export class BodySource implements UnderlyingDefaultSource<Bytes>, BodyReader {
  readonly #conn: Http1Conn;
  readonly #pool: ConnPool;
  readonly #mode: number;
  readonly #keepAlive: boolean;
  readonly #listener: FinishListener | undefined;
  readonly #decoder: ChunkedDecoder | null;
  #remaining: number;
  #bytes = 0;
  #done = false;
  /** The body ended cleanly: later reads give null. */
  #ended = false;
  /** The connection's own buffer while it reads into a lent one (`#space`), else null. */
  #own: Bytes | null = null;
  /** A read of the body is under way (a cancel then cannot drain the rest). */
  #reading = false;

  constructor(
    conn: Http1Conn,
    pool: ConnPool,
    mode: number,
    length: number,
    keepAlive: boolean,
    listener: FinishListener | undefined,
  ) {
    this.#conn = conn;
    this.#pool = pool;
    this.#mode = mode;
    this.#remaining = length;
    this.#keepAlive = keepAlive && mode !== BODY_CLOSE;
    this.#listener = listener;
    this.#decoder = mode === BODY_CHUNKED ? new ChunkedDecoder(RESPONSE_CHUNKED) : null;
  }

  /** The body as a stream with this as its source (Deno.serve's answers). */
  stream(): ReadableStream<Bytes> {
    return new ReadableStream(this, { highWaterMark: 0 });
  }

  /** As a stream's source: one chunk per pull, nothing read ahead (highWaterMark 0). */
  async pull(c: Controller): Promise<void> {
    let chunk: Bytes | null;
    try {
      chunk = await this.read();
    } catch (err) {
      c.error(err);
      return;
    }
    if (chunk === null) c.close();
    else c.enqueue(chunk);
  }

  cancel(): void {
    if (this.#done) return;
    this.#done = true;
    const conn = this.#conn;
    const rest = this.#remaining - (conn.end - conn.start);
    if (
      !this.#reading && this.#keepAlive && this.#mode === BODY_LENGTH && rest >= 0 &&
      rest <= DRAIN_BYTES
    ) {
      // The consumer (the client) went away: not the member's fault.
      this.#listener?.bodyFinished(false, this.#bytes, true);
      this.#drain(rest);
      return;
    }
    // A read may still be pending into the lent buffer: it is left to the garbage collector.
    this.#giveBack(false);
    this.#pool.release(conn, false);
    this.#listener?.bodyFinished(false, this.#bytes, true);
  }

  /**
   * Reads and drops the `rest` of the body, within `DRAIN_MS`, then gives the connection back
   * to its pool; closes it when the body does not end in time.
   */
  async #drain(rest: number): Promise<void> {
    const conn = this.#conn;
    conn.start = conn.end = 0;
    if (this.#own === null && rest > 0) this.#space(rest);
    const buf = conn.buf;
    let ok = false;
    watchdog.arm(conn, DRAIN_MS);
    try {
      while (rest > 0) {
        const k = await conn.socket.read(rest < buf.length ? buf.subarray(0, rest) : buf);
        if (k === null) break;
        rest -= k;
      }
      ok = rest === 0 && !conn.timedOut;
    } catch {
      // Timed out (the watchdog closed it) or broken: closed below.
    }
    watchdog.disarm(conn);
    conn.start = conn.end = 0;
    this.#giveBack(ok);
    this.#pool.release(conn, ok);
  }

  /**
   * The next chunk of the body (never empty; a fresh array or a copy, the consumer's to keep),
   * or null at its clean end. Rejects with `UpstreamError` (phase `body`) when the body breaks
   * or is malformed, and after a cancel. One read at a time.
   */
  read(): Promise<Bytes | null> {
    if (this.#done) return this.#over();
    return this.#read(false);
  }

  /**
   * Like `read`, but the chunk is a view of the connection's read buffer, valid only until the
   * next call: nothing is allocated or copied per chunk. Large bodies are read in reads of up
   * to `CHUNK` bytes. The connection goes back to its pool only at the call that gives null,
   * so the last chunk stays intact while the consumer writes it.
   */
  readView(): Promise<Bytes | null> {
    if (this.#done) return this.#over();
    return this.#read(true);
  }

  #over(): Promise<Bytes | null> {
    return this.#ended
      ? NULL
      : Promise.reject(new UpstreamError("body", "closed", "response body cancelled", true));
  }

  async #read(view: boolean): Promise<Bytes | null> {
    const conn = this.#conn;
    this.#reading = true;
    try {
      for (;;) {
        const buffered = conn.end - conn.start;
        if (this.#mode === BODY_LENGTH) {
          if (this.#remaining === 0) {
            // Only a view's last chunk leaves the end to the next call.
            this.#finish();
            return null;
          }
          if (buffered > 0) {
            const n = Math.min(this.#remaining, buffered);
            const out = view
              ? conn.buf.subarray(conn.start, conn.start + n)
              : conn.buf.slice(conn.start, conn.start + n);
            conn.start += n;
            this.#bytes += n;
            if ((this.#remaining -= n) === 0 && !view) this.#finish();
            return out;
          }
          const chunk = view
            ? this.#space(this.#remaining)
            : new Uint8Array(Math.min(this.#remaining, CHUNK));
          const k = await conn.socket.read(chunk);
          if (this.#done) return this.#gone();
          if (k === null) throw malformed("response body ended before its Content-Length", "body");
          this.#bytes += k;
          if ((this.#remaining -= k) === 0 && !view) this.#finish();
          return chunk.subarray(0, k);
        }
        if (this.#mode === BODY_CHUNKED) {
          const d = this.#decoder!;
          if (d.done) {
            this.#finish();
            return null;
          }
          if (buffered > 0) {
            conn.start = d.decode(conn.buf, conn.start, conn.end);
            const span = d.spanEnd - d.spanStart;
            let out: Bytes | null = null;
            if (span > 0) {
              out = view
                ? conn.buf.subarray(d.spanStart, d.spanEnd)
                : conn.buf.slice(d.spanStart, d.spanEnd);
              this.#bytes += span;
            }
            if (out !== null) {
              if (d.done && !view) this.#finish();
              return out;
            }
            continue;
          }
          conn.start = conn.end = 0;
          if (d.inData) {
            // Large chunk data: read straight into the chunk handed to the consumer.
            const chunk = view
              ? this.#space(d.remaining)
              : new Uint8Array(Math.min(d.remaining, CHUNK));
            const k = await conn.socket.read(chunk);
            if (this.#done) return this.#gone();
            if (k === null) throw malformed("chunked response body ended early", "body");
            d.consumeData(k);
            this.#bytes += k;
            return chunk.subarray(0, k);
          }
          const k = await conn.read();
          if (this.#done) return this.#gone();
          if (k === null) throw malformed("chunked response body ended early", "body");
          conn.end += k;
          continue;
        }
        // BODY_CLOSE
        if (buffered > 0) {
          const out = view
            ? conn.buf.subarray(conn.start, conn.end)
            : conn.buf.slice(conn.start, conn.end);
          conn.start = conn.end;
          this.#bytes += out.length;
          return out;
        }
        const chunk = view ? this.#space(CHUNK) : new Uint8Array(CHUNK);
        let k: number | null;
        try {
          k = await conn.socket.read(chunk);
        } catch (err) {
          // TLS members often close without close_notify; the body still ended.
          if (!(err instanceof Deno.errors.UnexpectedEof)) throw err;
          k = null;
        }
        if (this.#done) return this.#gone();
        if (k === null) {
          this.#finish();
          return null;
        }
        this.#bytes += k;
        return chunk.subarray(0, k);
      }
    } catch (err) {
      if (this.#done) return this.#gone();
      this.#done = true;
      this.#giveBack(false);
      this.#pool.release(this.#conn, false);
      const failure = ioError("body", err, true, false, "reading the response body");
      this.#listener?.bodyFinished(false, this.#bytes, false, false, failure);
      throw failure;
    } finally {
      this.#reading = false;
    }
  }

  /**
   * The connection's read buffer, emptied, as the place of the next direct read of at most
   * `want` bytes: a lent `VIEW_SIZE` one from the first such read to the body's end.
   */
  #space(want: number): Bytes {
    const conn = this.#conn;
    conn.start = conn.end = 0;
    if (this.#own === null && conn.buf.length < VIEW_SIZE) {
      this.#own = conn.buf;
      conn.buf = takeView();
    }
    return want < conn.buf.length ? conn.buf.subarray(0, want) : conn.buf;
  }

  /**
   * Gives the connection its own buffer back (what is unread moves with it when it fits);
   * `reuse`: no read is pending into the lent one, which may serve another body.
   */
  #giveBack(reuse: boolean): void {
    const own = this.#own;
    if (own === null) return;
    this.#own = null;
    const conn = this.#conn;
    const lent = conn.buf;
    const left = conn.end - conn.start;
    if (left > 0 && left <= own.length) own.set(lent.subarray(conn.start, conn.end));
    conn.buf = own;
    conn.start = 0;
    conn.end = left <= own.length ? left : 0;
    if (reuse) giveView(lent);
  }

  /** A read that was pending when the body was cancelled. */
  #gone(): Promise<Bytes | null> {
    return this.read();
  }

  #finish(): void {
    this.#done = true;
    this.#ended = true;
    const conn = this.#conn;
    const surplus = conn.start !== conn.end;
    this.#giveBack(true);
    this.#pool.release(conn, this.#keepAlive && !surplus);
    this.#listener?.bodyFinished(true, this.#bytes, false, surplus);
  }
}

const NULL: Promise<null> = Promise.resolve(null);
