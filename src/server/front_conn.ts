/**
 * The session of one connection of scalwsd's own HTTP/1.1 front: the front's handler for that
 * connection and the `Session` the dispatcher sees for each of its requests. HTTP/1.1 serves
 * one request at a time per connection, so one object per connection is refilled per request
 * (the fast path allocates nothing for it); it knows the connection's `ClientConn` (peer, TLS
 * state, the `limit_conn` verdict). Answers are `FrontAnswer`s, written by the front, which
 * keeps the connection's books (started, done, lingering, draining) itself.
 *
 * It is not the connection loop (`front/front_connection.ts` reads, parses and writes) and not the
 * request path (`dispatcher.ts`).
 *
 * @module
 */

import { plain } from "../base/mod.ts";
import {
  type Answer,
  FRONT_FORM,
  type FrontConnection,
  type FrontHandler,
  type FrontRequest,
  type HeadLimits,
  headLimitStatus,
  NO_REQUEST,
} from "../front/mod.ts";
import { log } from "../observe/mod.ts";
import type { ClientConn } from "./client_conn.ts";
import type { Dispatcher } from "./dispatcher.ts";
import {
  hostName,
  type Policy,
  type Protocol,
  type Session,
  type TlsLogFields,
} from "../pipeline/mod.ts";

const OVER_LIMIT = { "retry-after": "1", connection: "close" };

export class FrontServe implements FrontHandler, Session {
  /**
   * The request being served; `NO_REQUEST` between requests, so that an idle keep-alive
   * connection keeps no request head.
   */
  req: FrontRequest = NO_REQUEST;
  /** The request's HTTP minor version, kept past its answer (a streamed body's access log). */
  private minor = 1;
  /** The connection, which hands its socket to a tunnel after a 101. */
  upgrade: FrontConnection | null = null;
  readonly form = FRONT_FORM;
  readonly streams = 0;

  constructor(
    private readonly d: Dispatcher,
    private readonly c: ClientConn,
    /** The listener: its `redirect` policy (null: it routes), read per request (reloads). */
    private readonly listener: { readonly redirect: Policy | null },
  ) {}

  get draining(): boolean {
    return this.d.draining;
  }

  serve(req: FrontRequest, front: FrontConnection): Answer | Promise<Answer> {
    // Over `limit_conn`: the request is refused and the connection closes after the answer.
    if (this.c.overLimit) {
      return plain(429, "Too Many Requests: too many connections from this address", OVER_LIMIT);
    }
    this.req = req;
    this.minor = req.head.minor;
    this.upgrade = front;
    // HTTP-01 validation of a `tls.acme` domain, on plain listeners only, before any
    // redirect or routing; one flag read when no listener has `tls.acme`.
    const challenges = this.d.challenges;
    if (challenges !== null && challenges.active && this.c.tls === null) {
      const host = hostName(req.authority);
      const answer = challenges.answer(host, req.target);
      if (answer === null && challenges.sharedDir !== null) {
        // Another instance may be ordering: its tokens are in the shared state directory.
        return challenges.shared(host, req.target).then((a) => this.d.challenge(this, host, a));
      }
      if (answer !== undefined) return this.d.challenge(this, host, answer);
    }
    return this.d.serve(this, this.listener.redirect);
  }

  answered(): void {
    this.req = NO_REQUEST;
  }

  failed(err: unknown): Answer {
    log("error", "request_failed", { error: String(err) });
    return plain(500, "Internal Server Error");
  }

  // Session ------------------------------------------------------------------------------

  interim(status: number, fields: readonly [string, string][]): void {
    if (this.req.head.minor === 1) this.upgrade?.sendInterim(status, fields);
  }

  get protocol(): Protocol {
    return this.minor === 0 ? "HTTP/1.0" : "HTTP/1.1";
  }

  get target(): string {
    return this.req.head.target;
  }

  get authority(): string | null {
    const head = this.req.head;
    return head.targetAuthority !== "" ? head.targetAuthority : head.host;
  }

  get peer(): string {
    return this.c.peer;
  }

  get secure(): boolean {
    return this.req.secure;
  }

  get port(): number {
    return this.c.port;
  }

  get tls(): TlsLogFields {
    return this.c.tlsLog;
  }

  get address(): string {
    return this.c.address;
  }

  get peerPort(): number {
    return this.c.peerPort;
  }

  get contentLength(): number {
    return this.req.head.contentLength;
  }

  headLimit(limits: HeadLimits): number {
    return headLimitStatus(this.req.head, limits);
  }

  misdirected(host: string): boolean {
    return this.c.misdirected(host);
  }

  watchGone(onGone: () => void): boolean {
    return this.upgrade !== null && this.upgrade.watchGone(onGone);
  }

  /** The front counted it (`ConnObserver.requestStarted`). */
  started(): void {}

  /** The front writes the answer and keeps the books, draining included. */
  finish(_ex: unknown, answer: Answer): Answer {
    return answer;
  }
}
