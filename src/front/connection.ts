/**
 * One client connection served by the front: reads heads into a small buffer of its own
 * (a pooled larger one only while a read brings more), parses them, hands each request to the
 * pipeline and writes the answers in order (pipelined requests wait their turn), keeping the
 * connection open as HTTP/1.1 and HTTP/1.0 keep-alive rules say.
 */

import type { Answer } from "./answer.ts";
import {
  giveBuffer,
  giveSmall,
  POOLED_SIZE,
  SMALL_SIZE,
  takeBuffer,
  takeSmall,
} from "./buffer_pool.ts";
import { FrontRequest } from "./front_request.ts";
import { BodyInput, RequestBody } from "./request_body.ts";
import { findHeadEnd } from "../wire/mod.ts";
import { HeadError, MAX_HEAD, parseRequestHead, RequestHead } from "./request_head.ts";
import { type ClientSocket, writeAll, writeAnswer } from "./response_writer.ts";

/** Bytes of the buffer each connection keeps while idle. */
export const IDLE_BUFFER = SMALL_SIZE;
/** Empty lines tolerated before a request line (RFC 9112 2.2: at least one). */
const MAX_LEADING_EMPTY = 8;

/** What the connection reports to its tracker (`ClientConn` in the server). */
export interface ConnObserver {
  /** A complete head arrived. */
  requestStarted(): void;
  /** Its answer was written. */
  requestDone(): void;
  /** The connection was handed to a tunnel (101): no HTTP timeout applies any more. */
  upgraded(): void;
  /** The answer left the body unread: the connection closes after a short grace. */
  linger(): void;
}

/** The pipeline as the front sees it. */
export interface FrontHandler {
  /** Answers one request. Throwing is a bug: the client gets 500. */
  serve(req: FrontRequest, conn: FrontConnection): Answer | Promise<Answer>;
  /** Answers carry `Connection: close` (draining). */
  readonly draining: boolean;
  /** Called with a handler's exception. */
  failed(err: unknown): Answer;
}

const encoder = new TextEncoder();
const CONTINUE = encoder.encode("HTTP/1.1 100 Continue\r\n\r\n");
const BAD_REQUEST = encoder.encode(
  "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\n" +
    "content-length: 12\r\nconnection: close\r\n\r\nBad Request\n",
);

function ignore(): void {}

export class FrontConnection implements BodyInput {
  buf: Uint8Array;
  start = 0;
  end = 0;
  /** The connection's own small buffer, used whenever no pooled one is needed. */
  private readonly own = takeSmall();
  private closed = false;
  private busy = false;
  private stopping = false;
  /** Settles when the connection is closed and served no more. */
  readonly finished: Promise<void>;
  /** The raw connection was handed over (an upgrade): the loop ends without closing it. */
  private handedOver = false;
  /** Settles when a tunnel that took the connection is over. */
  private tunnel: Promise<void> | null = null;

  constructor(
    readonly conn: ClientSocket,
    private readonly handler: FrontHandler,
    private readonly observer: ConnObserver,
    readonly secure: boolean,
  ) {
    this.buf = this.own;
    this.finished = this.run();
  }

  /** Closes at once, whatever is in flight (idempotent). */
  kill(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.conn.close();
    } catch {
      ignore();
    }
  }

  /** Graceful: an idle connection closes now, a busy one after its answer. */
  shutdown(): Promise<void> {
    this.stopping = true;
    // A tunnel is left to finish, as Deno.serve lets its WebSockets finish.
    if (!this.busy && !this.handedOver) this.kill();
    return this.finished;
  }

  /**
   * Takes the raw connection away from the loop (after a 101 was written); the caller closes
   * it and calls `ended`, until when the connection counts as open (`finished` waits).
   */
  handOver(): { conn: ClientSocket; leftover: Uint8Array; ended: () => void } {
    this.handedOver = true;
    const leftover = this.buf.slice(this.start, this.end);
    this.start = this.end = 0;
    let ended!: () => void;
    this.tunnel = new Promise<void>((r) => (ended = r));
    return { conn: this.conn, leftover, ended };
  }

  private async run(): Promise<void> {
    try {
      await this.loop();
    } catch {
      // A read or write failed: the peer is gone.
    }
    if (this.buf !== this.own) giveBuffer(this.buf as Uint8Array<ArrayBuffer>);
    this.buf = this.own;
    if (this.tunnel !== null) await this.tunnel;
    else this.kill();
    // Closed: no read is pending into it any more.
    giveSmall(this.own);
  }

  private async loop(): Promise<void> {
    let scan = 0;
    for (;;) {
      if (this.start === this.end) {
        this.start = this.end = scan = 0;
        if (this.buf !== this.own) {
          // Idle: the pooled buffer goes back; the next head lands in the small one.
          giveBuffer(this.buf as Uint8Array<ArrayBuffer>);
          this.buf = this.own;
        }
        if (this.stopping) return;
      }
      // Empty lines before a request line are skipped.
      let skipped = 0;
      while (this.start < this.end && skipped < MAX_LEADING_EMPTY) {
        const c = this.buf[this.start];
        if (c !== 0x0a && c !== 0x0d) break;
        this.start++;
        skipped++;
      }
      if (scan < this.start) scan = this.start;
      const found = this.start < this.end ? findHeadEnd(this.buf, scan, this.end) : ~this.start;
      if (found < 0) {
        scan = ~found;
        if (this.end - this.start >= MAX_HEAD) return this.refuse();
        const before = this.start;
        if (!(await this.fill())) return;
        scan -= before - this.start;
        continue;
      }
      if (found - this.start > MAX_HEAD) return this.refuse();
      let head: RequestHead;
      try {
        head = parseRequestHead(this.buf, this.start, found, new RequestHead());
      } catch (err) {
        if (err instanceof HeadError) return this.refuse();
        throw err;
      }
      this.start = found;
      scan = found;
      if (!(await this.answer(head))) return;
      scan = this.start;
    }
  }

  /** Serves one request; false when the connection must close. */
  private async answer(head: RequestHead): Promise<boolean> {
    this.busy = true;
    this.observer.requestStarted();
    const body = head.hasBody
      ? new RequestBody(this, head.chunked ? -1 : head.contentLength, head.expectContinue)
      : null;
    const req = new FrontRequest(head, body, this.secure);
    let answer: Answer;
    try {
      const a = this.handler.serve(req, this);
      answer = a instanceof Promise ? await a : a;
    } catch (err) {
      answer = this.handler.failed(err);
    }
    const bodyLeft = body !== null && !body.complete && !body.skipBuffered();
    const keep = head.keepAlive && !bodyLeft && !this.stopping && !this.handler.draining;
    let ok = false;
    try {
      ok = await writeAnswer(this.conn, answer, head, keep);
    } finally {
      this.busy = false;
    }
    if (this.handedOver) {
      // The 101 went out and a tunnel took the connection.
      this.observer.upgraded();
      return false;
    }
    if (bodyLeft && !body!.failed && !this.closed) {
      // The answer came before the body: discard what still arrives for a short while.
      this.observer.linger();
      await this.discard();
      return false;
    }
    this.observer.requestDone();
    return ok && keep && !this.stopping;
  }

  /** Reads and drops input until the peer closes or the tracker closes the connection. */
  private async discard(): Promise<void> {
    this.start = this.end = 0;
    try {
      while ((await this.conn.read(this.buf)) !== null);
    } catch {
      ignore();
    }
  }

  private async refuse(): Promise<void> {
    try {
      await writeAll(this.conn, BAD_REQUEST);
    } catch {
      ignore();
    }
  }

  // BodyInput ---------------------------------------------------------------------------

  /** Reads more after `end`, moving to a pooled (or larger) buffer when full. */
  async fill(): Promise<boolean> {
    if (this.end === this.buf.length) {
      const kept = this.end - this.start;
      let next: Uint8Array;
      if (kept < this.buf.length / 2) next = this.buf; // room after compaction
      else if (this.buf === this.own) next = takeBuffer();
      else next = new Uint8Array(Math.max(this.buf.length * 2, POOLED_SIZE));
      if (next === this.buf) this.buf.copyWithin(0, this.start, this.end);
      else next.set(this.buf.subarray(this.start, this.end));
      if (next !== this.buf && this.buf !== this.own && this.buf.length === POOLED_SIZE) {
        giveBuffer(this.buf as Uint8Array<ArrayBuffer>);
      }
      this.buf = next;
      this.start = 0;
      this.end = kept;
    }
    const n = await this.conn.read(this.buf.subarray(this.end));
    if (n === null) return false;
    this.end += n;
    return true;
  }

  readDirect(into: Uint8Array): Promise<number | null> {
    return this.conn.read(into);
  }

  sendContinue(): Promise<void> {
    return writeAll(this.conn, CONTINUE);
  }
}
