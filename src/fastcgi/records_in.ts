/**
 * Reading the records of one answer from a connection: whole records in the read buffer,
 * checked as they arrive; STDERR goes to a bounded sink; END_REQUEST ends the answer.
 */

import { type Http1Conn, malformed, UpstreamError, type UpstreamPhase } from "../http1/mod.ts";
import {
  CANT_MPX_CONN,
  END_REQUEST,
  HEADER_LEN,
  OVERLOADED,
  readHeader,
  recordError,
  type RecordHeader,
  REQUEST_COMPLETE,
  STDERR,
  UNKNOWN_ROLE,
} from "./record.ts";

/** Receives the application's FCGI_STDERR bytes. */
export interface StderrSink {
  onStderr(buf: Uint8Array, from: number, to: number): void;
}

/** Smallest free space offered to a read. */
const MIN_READ = 4096;

/** END_REQUEST protocol statuses in words. */
function refusal(status: number): string {
  switch (status) {
    case CANT_MPX_CONN:
      return "cannot multiplex connections";
    case OVERLOADED:
      return "overloaded";
    case UNKNOWN_ROLE:
      return "unknown role";
    default:
      return `protocol status ${status}`;
  }
}

/**
 * Reads records off one connection. `next` leaves one STDOUT record (or END_REQUEST) whole in
 * the buffer at `conn.start` with its header in `h`; STDERR records are consumed on the way.
 */
export class RecordsIn {
  readonly h: RecordHeader = { type: 0, requestId: 0, contentLength: 0, paddingLength: 0 };
  /** END_REQUEST seen (with protocol status REQUEST_COMPLETE). */
  ended = false;
  /** The application's exit status from END_REQUEST. */
  appStatus = 0;

  constructor(
    readonly conn: Http1Conn,
    readonly stderr: StderrSink | undefined,
  ) {}

  /** Content start of the current record. */
  get contentStart(): number {
    return this.conn.start + HEADER_LEN;
  }

  /** Record length with header and padding. */
  get total(): number {
    return HEADER_LEN + this.h.contentLength + this.h.paddingLength;
  }

  /** True when a whole STDOUT or END_REQUEST record is buffered (STDERR ones are consumed). */
  buffered(): boolean {
    const conn = this.conn;
    const h = this.h;
    for (;;) {
      const v = readHeader(conn.buf, conn.start, conn.end, h);
      if (v < 0) return false;
      const why = recordError(h, v);
      if (why !== null) throw malformed(why, this.phase);
      if (conn.end - conn.start < this.total) return false;
      if (h.type === STDERR) {
        const cs = conn.start + HEADER_LEN;
        if (h.contentLength > 0) this.stderr?.onStderr(conn.buf, cs, cs + h.contentLength);
        conn.start += this.total;
        continue;
      }
      if (h.type === END_REQUEST) {
        const cs = conn.start + HEADER_LEN;
        const b = conn.buf;
        this.appStatus = ((b[cs] << 24) | (b[cs + 1] << 16) | (b[cs + 2] << 8) | b[cs + 3]) >>> 0;
        const ps = b[cs + 4];
        if (ps !== REQUEST_COMPLETE) {
          throw malformed(`application refused the request: ${refusal(ps)}`, this.phase);
        }
        this.ended = true;
      }
      return true;
    }
  }

  /** Phase reported by errors: `head` until the caller says otherwise. */
  phase: UpstreamPhase = "head";

  /** Consumes the current record. */
  skip(): void {
    this.conn.start += this.total;
  }

  /** Free space the next `more()` asks for: the rest of the current record, at least 4 KiB. */
  private need(): number {
    const conn = this.conn;
    const have = conn.end - conn.start;
    if (have >= HEADER_LEN && readHeader(conn.buf, conn.start, conn.end, this.h) >= 0) {
      return Math.max(MIN_READ, this.total - have);
    }
    return MIN_READ;
  }

  /**
   * True when the next `more()` compacts or replaces the read buffer: bytes before
   * `conn.start` (records already consumed) are lost then, so views of them must be copied.
   */
  willMove(): boolean {
    return this.conn.buf.length - this.conn.end < this.need();
  }

  /**
   * Reads more bytes, making room for the rest of the current record. Throws `closed` (or
   * `reset`) when the application closed the connection mid-answer.
   */
  async more(): Promise<void> {
    const conn = this.conn;
    const need = this.need();
    conn.reserve(need);
    const k = await conn.read();
    if (k === null) {
      const reset = await conn.peerReset();
      const what = reset ? "reset" : "closed";
      throw new UpstreamError(
        this.phase,
        what,
        conn.received === 0
          ? `application ${what} the connection without a response`
          : `application ${what} the connection in the middle of its answer`,
        true,
      );
    }
    conn.end += k;
    conn.received += k;
  }
}
