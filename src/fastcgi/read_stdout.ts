/**
 * The source behind a large FastCGI response body: STDOUT record contents as they arrive,
 * pulled only when the consumer reads; END_REQUEST closes it and gives the connection back.
 */

import { type Bytes, type ConnPool, type FinishListener, ioError } from "../http1/mod.ts";
import { STDOUT } from "./record.ts";
import type { RecordsIn } from "./records_in.ts";
import { FcgiConns } from "./conns.ts";

type Controller = ReadableStreamDefaultController<Bytes>;

export class FcgiBodySource implements UnderlyingDefaultSource<Bytes> {
  #first: Bytes | null;
  #bytes = 0;
  #done = false;

  constructor(
    readonly rec: RecordsIn,
    readonly pool: ConnPool,
    first: Bytes,
    readonly listener: FinishListener | undefined,
  ) {
    this.#first = first.length > 0 ? first : null;
  }

  pull(c: Controller): Promise<void> | void {
    const first = this.#first;
    if (first !== null) {
      this.#first = null;
      this.#bytes += first.length;
      c.enqueue(first);
      return;
    }
    return this.#pull(c);
  }

  cancel(): void {
    if (this.#done) return;
    this.#done = true;
    this.pool.release(this.rec.conn, false);
    this.listener?.bodyFinished(false, this.#bytes, true);
  }

  async #pull(c: Controller): Promise<void> {
    const rec = this.rec;
    const conn = rec.conn;
    try {
      for (;;) {
        if (this.#done) return;
        if (!rec.buffered()) {
          await rec.more();
          continue;
        }
        if (rec.ended) {
          rec.skip();
          this.#done = true;
          if (this.pool instanceof FcgiConns) this.pool.finished(conn);
          else this.pool.release(conn, conn.start === conn.end);
          c.close();
          this.listener?.bodyFinished(true, this.#bytes);
          return;
        }
        const cs = rec.contentStart;
        const n = rec.h.contentLength;
        const isOut = rec.h.type === STDOUT;
        rec.skip();
        if (isOut && n > 0) {
          this.#bytes += n;
          c.enqueue(conn.buf.slice(cs, cs + n));
          return;
        }
      }
    } catch (err) {
      if (this.#done) return;
      this.#done = true;
      this.pool.release(conn, false);
      c.error(ioError("body", err, true, false, "reading the response body"));
      this.listener?.bodyFinished(false, this.#bytes);
    }
  }
}
