/**
 * The source behind a streamed response body. It pulls from the socket only when the consumer
 * reads (highWaterMark 0), returns the connection to its pool when the body ended cleanly and
 * keep-alive allows, and closes it on error or cancel.
 */

import { ChunkedDecoder } from "./chunked.ts";
import type { ConnPool } from "./conn_pool.ts";
import type { Http1Conn } from "./connection.ts";
import type { Bytes, FinishListener } from "./types.ts";
import { ioError, malformed } from "./upstream_error.ts";

/** Body delimited by Content-Length. */
export const BODY_LENGTH = 0;
/** Chunked body. */
export const BODY_CHUNKED = 1;
/** Body delimited by the member closing the connection. */
export const BODY_CLOSE = 2;

/** Largest read into a fresh chunk. */
const CHUNK = 65536;

type Controller = ReadableStreamDefaultController<Bytes>;

/** One streamed response body; an object with methods rather than closures per response. */
export class BodySource implements UnderlyingDefaultSource<Bytes> {
  readonly #conn: Http1Conn;
  readonly #pool: ConnPool;
  readonly #mode: number;
  readonly #keepAlive: boolean;
  readonly #listener: FinishListener | undefined;
  readonly #decoder: ChunkedDecoder | null;
  #remaining: number;
  #bytes = 0;
  #done = false;

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
    this.#decoder = mode === BODY_CHUNKED ? new ChunkedDecoder() : null;
  }

  pull(c: Controller): Promise<void> {
    return this.#pull(c);
  }

  cancel(): void {
    if (this.#done) return;
    this.#done = true;
    this.#pool.release(this.#conn, false);
    // The consumer (the client) went away: not the member's fault.
    this.#listener?.bodyFinished(false, this.#bytes, true);
  }

  async #pull(c: Controller): Promise<void> {
    const conn = this.#conn;
    try {
      for (;;) {
        if (this.#done) return;
        const buffered = conn.end - conn.start;
        if (this.#mode === BODY_LENGTH) {
          if (buffered > 0) {
            const n = Math.min(this.#remaining, buffered);
            this.#emit(c, conn.buf.slice(conn.start, conn.start + n));
            conn.start += n;
            if ((this.#remaining -= n) === 0) this.#finish(c);
            return;
          }
          const chunk = new Uint8Array(Math.min(this.#remaining, CHUNK));
          const k = await conn.socket.read(chunk);
          if (this.#done) return;
          if (k === null) throw malformed("response body ended before its Content-Length", "body");
          this.#emit(c, chunk.subarray(0, k));
          if ((this.#remaining -= k) === 0) this.#finish(c);
          return;
        }
        if (this.#mode === BODY_CHUNKED) {
          const d = this.#decoder!;
          if (buffered > 0) {
            conn.start = d.decode(conn.buf, conn.start, conn.end);
            const span = d.spanEnd - d.spanStart;
            if (span > 0) this.#emit(c, conn.buf.slice(d.spanStart, d.spanEnd));
            if (d.done) this.#finish(c);
            if (span > 0 || d.done) return;
            continue;
          }
          conn.start = conn.end = 0;
          if (d.inData) {
            // Large chunk data: read straight into the chunk handed to the consumer.
            const chunk = new Uint8Array(Math.min(d.remaining, CHUNK));
            const k = await conn.socket.read(chunk);
            if (this.#done) return;
            if (k === null) throw malformed("chunked response body ended early", "body");
            d.consumeData(k);
            this.#emit(c, chunk.subarray(0, k));
            return;
          }
          const k = await conn.read();
          if (this.#done) return;
          if (k === null) throw malformed("chunked response body ended early", "body");
          conn.end += k;
          continue;
        }
        // BODY_CLOSE
        if (buffered > 0) {
          this.#emit(c, conn.buf.slice(conn.start, conn.end));
          conn.start = conn.end;
          return;
        }
        const chunk = new Uint8Array(CHUNK);
        let k: number | null;
        try {
          k = await conn.socket.read(chunk);
        } catch (err) {
          // TLS members often close without close_notify; the body still ended.
          if (!(err instanceof Deno.errors.UnexpectedEof)) throw err;
          k = null;
        }
        if (this.#done) return;
        if (k === null) {
          this.#finish(c);
          return;
        }
        this.#emit(c, chunk.subarray(0, k));
        return;
      }
    } catch (err) {
      if (this.#done) return;
      this.#fail(c, err);
    }
  }

  #emit(c: Controller, bytes: Bytes): void {
    this.#bytes += bytes.length;
    c.enqueue(bytes);
  }

  #finish(c: Controller): void {
    this.#done = true;
    const conn = this.#conn;
    const surplus = conn.start !== conn.end;
    this.#pool.release(conn, this.#keepAlive && !surplus);
    c.close();
    this.#listener?.bodyFinished(true, this.#bytes, false, surplus);
  }

  #fail(c: Controller, err: unknown): void {
    this.#done = true;
    this.#pool.release(this.#conn, false);
    c.error(ioError("body", err, true, false, "reading the response body"));
    this.#listener?.bodyFinished(false, this.#bytes);
  }
}
