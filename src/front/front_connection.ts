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
import { BodyInput, RequestBody } from "./read_request_body.ts";
import { findHeadEnd, statusText } from "../wire/mod.ts";
import { HeadError, MAX_HEAD, parseRequestHead, RequestHead } from "./parse_request_head.ts";
import { type ClientSocket, writeAll, writeAnswer } from "./write_response.ts";

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
  /**
   * The connection sent its end (half-close) and reads until the client ends too: it is closed
   * after a short grace if the client does not.
   */
  halfClosed(): void;
}

/** The pipeline as the front sees it. */
export interface FrontHandler {
  /** Answers one request. Throwing is a bug: the client gets 500. */
  serve(req: FrontRequest, conn: FrontConnection): Answer | Promise<Answer>;
  /** Answers carry `Connection: close` (draining). */
  readonly draining: boolean;
  /** Called with a handler's exception. */
  failed(err: unknown): Answer;
  /** The answer was written (or failed): what the request left behind may be let go. */
  answered?(): void;
}

/**
 * Draining: how long an idle keep-alive connection waits for one more request (answered with
 * `Connection: close`) before it is half-closed, in ms; each connection waits between 0.75 and
 * 1.25 times this (jitter: thousands do not close at one instant).
 */
export const DRAIN_IDLE_GRACE = 1000;
/**
 * When the grace ends, a read may have completed without the loop having seen it yet: it looks
 * again after this many ms (the event loop polls the sockets meanwhile) before half-closing.
 */
const SETTLE = 5;

/** A client socket that may also end its writing side (Deno.Conn does). */
type HalfClosable = ClientSocket & { closeWrite?: () => Promise<void> };

const encoder = new TextEncoder();
const CONTINUE = encoder.encode("HTTP/1.1 100 Continue\r\n\r\n");
/**
 * The refusal of a head the front will not read; the connection closes. A 400 names what was
 * wrong (`Bad Request: obsolete line folding`), as the pipeline's own 400s do; the reasons are
 * the parser's fixed texts, never the client's bytes.
 */
function refusal(status: number, reason: string): Uint8Array {
  const text = status === 414
    ? "URI Too Long"
    : status === 431
    ? "Request Header Fields Too Large"
    : "Bad Request";
  const body = status === 400 && reason !== "" ? `${text}: ${reason}\n` : `${text}\n`;
  return encoder.encode(
    `HTTP/1.1 ${status === 414 || status === 431 ? status : 400} ${text}\r\n` +
      `content-type: text/plain; charset=utf-8\r\ncontent-length: ${body.length}\r\n` +
      `connection: close\r\n\r\n${body}`,
  );
}

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
  /** Draining: the next answer carries `Connection: close`; idle past the grace, half-closed. */
  private draining = false;
  /** Our end was sent (half-close): what still arrives is read and dropped. */
  private halfClosed = false;
  private graceTimer: ReturnType<typeof setTimeout> | undefined;
  /** Settles when the connection is closed and served no more. */
  readonly finished: Promise<void>;
  /** The raw connection was handed over (an upgrade): the loop ends without closing it. */
  private handedOver = false;
  /** Settles when a tunnel that took the connection is over. */
  private tunnel: Promise<void> | null = null;
  /** The read `watchGone` started while a request is served: the loop takes it over. */
  private watching: Promise<number | null> | null = null;
  /** Told once if the client closes while its request is served (see `watchGone`). */
  private onGone: (() => void) | null = null;
  /** The current request's body, or null. */
  private body: RequestBody | null = null;

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

  /**
   * Draining (HAProxy's `idle-close-on-response`): the connection stays open until it carries
   * one more request, answered with `Connection: close`; one still idle after `graceMs` (times
   * 0.75 to 1.25, at random) is half-closed: its end is sent, and what the client may still
   * send is read and dropped until it ends too (or the tracker's grace passes). Settles when the
   * connection is closed.
   */
  drain(graceMs = DRAIN_IDLE_GRACE, random: () => number = Math.random): Promise<void> {
    if (!this.draining && !this.closed) {
      this.draining = true;
      const wait = graceMs * (0.75 + 0.5 * random());
      this.graceTimer = setTimeout(() => this.graceOver(), wait);
      this.finished.then(() => clearTimeout(this.graceTimer));
    }
    return this.finished;
  }

  /** True while nothing of a request is being served or has arrived. */
  private get idle(): boolean {
    return !this.busy && !this.handedOver && !this.closed && !this.halfClosed &&
      this.start === this.end;
  }

  private graceOver(): void {
    if (!this.idle) return; // a request is here: its answer closes the connection
    this.graceTimer = setTimeout(() => {
      if (this.idle) this.halfClose();
    }, SETTLE);
  }

  /** Sends our end and lets the loop read and drop what still arrives. */
  private halfClose(): void {
    this.halfClosed = true;
    const end = (this.conn as HalfClosable).closeWrite;
    if (end === undefined) {
      this.kill();
      return;
    }
    this.observer.halfClosed();
    end.call(this.conn).catch(() => this.kill());
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
      if (this.watching !== null && !(await this.settleWatch())) return;
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
        if (this.end - this.start >= MAX_HEAD) return this.refuse(this.oversize());
        const before = this.start;
        if (!(await this.fill())) return;
        // Half-closed while idle: nothing more can be answered.
        if (this.halfClosed) return this.discard();
        scan -= before - this.start;
        continue;
      }
      if (found - this.start > MAX_HEAD) return this.refuse(this.oversize());
      let head: RequestHead;
      try {
        head = parseRequestHead(this.buf, this.start, found, new RequestHead());
      } catch (err) {
        if (err instanceof HeadError) return this.refuse(err.status, err.message);
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
    this.body = body;
    let answer: Answer;
    try {
      const a = this.handler.serve(req, this);
      answer = a instanceof Promise ? await a : a;
    } catch (err) {
      answer = this.handler.failed(err);
    }
    this.onGone = null;
    this.body = null;
    const bodyLeft = body !== null && !body.complete && !body.skipBuffered();
    // Draining: the answer closes the connection, unless the client already sent (pipelined)
    // more requests, which are answered first.
    const draining = (this.draining || this.handler.draining) && this.start === this.end;
    const keep = head.keepAlive && !bodyLeft && !this.stopping && !draining;
    let ok = false;
    if (this.interims !== null) {
      await this.interims;
      this.interims = null;
    }
    try {
      ok = await writeAnswer(this.conn, answer, head, keep);
    } finally {
      this.busy = false;
      this.handler.answered?.();
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
    if (head.keepAlive && draining && !bodyLeft && !this.stopping && !this.closed) {
      // The client meant to send more: our end first, so that a request it sends meanwhile
      // meets an end it can see, not a reset that could also destroy this answer.
      this.halfClose();
      if (!this.closed) await this.discard();
      return false;
    }
    return ok && keep && !this.stopping;
  }

  /** Reads and drops input until the peer closes or the tracker closes the connection. */
  private async discard(): Promise<void> {
    if (this.watching !== null && !(await this.settleWatch())) return;
    this.start = this.end = 0;
    try {
      while ((await this.conn.read(this.buf)) !== null);
    } catch {
      ignore();
    }
  }

  /**
   * A head over the front's `MAX_HEAD`: 414 when its request line alone is (the target is
   * longer than any `max_uri_length`), else 431 (the header fields are).
   */
  private oversize(): number {
    const lf = this.buf.subarray(this.start, this.end).indexOf(0x0a);
    return lf < 0 || lf >= MAX_HEAD ? 414 : 431;
  }

  private async refuse(status = 400, reason = ""): Promise<void> {
    try {
      await writeAll(this.conn, refusal(status, reason));
    } catch {
      ignore();
    }
  }

  // BodyInput ---------------------------------------------------------------------------

  /** Reads more after `end`, moving to a pooled (or larger) buffer when full. */
  async fill(): Promise<boolean> {
    if (this.watching !== null) return this.settleWatch();
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

  /**
   * Calls `onGone` once if the client closes the connection (EOF or an error) before the
   * current request is answered: the read the loop would make next is started now. False
   * when that cannot be watched: the request body is not read whole yet, a tunnel or a pooled
   * buffer holds the connection, or the read is already made (then a pipelined request came,
   * which is no close).
   */
  watchGone(onGone: () => void): boolean {
    const b = this.body;
    if (
      this.closed || this.handedOver || this.watching !== null || this.buf !== this.own ||
      this.end === this.buf.length || (b !== null && !b.complete)
    ) return false;
    this.onGone = onGone;
    this.watching = this.conn.read(this.buf.subarray(this.end)).then(
      (n) => this.watched(n),
      () => this.watched(null),
    );
    return true;
  }

  private watched(n: number | null): number | null {
    if (n === null) {
      const f = this.onGone;
      this.onGone = null;
      f?.();
    } else this.end += n;
    return n;
  }

  /** Waits for the read `watchGone` started: false when the client closed. */
  private async settleWatch(): Promise<boolean> {
    const n = await this.watching;
    this.watching = null;
    return n !== null;
  }

  sendContinue(): Promise<void> {
    return writeAll(this.conn, CONTINUE);
  }

  /** Interim answers written, in order, before the request's answer (which waits for them). */
  private interims: Promise<void> | null = null;

  /** Writes an interim (1xx) head now, ahead of the answer being prepared. */
  sendInterim(status: number, fields: readonly [string, string][]): void {
    let text = `HTTP/1.1 ${status} ${statusText(status)}\r\n`;
    for (const [k, v] of fields) text += `${k}: ${v}\r\n`;
    const bytes = encoder.encode(text + "\r\n");
    const prev = this.interims ?? Promise.resolve();
    this.interims = prev.then(() => writeAll(this.conn, bytes)).catch(() => {});
  }
}
