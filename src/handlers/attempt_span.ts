/**
 * The client span of one attempt on a member (HTTP or FastCGI), a child of the request's server
 * span: the member's `server.address`/`server.port`, `scalws.pool`, `scalws.attempt` (1 for the
 * first), and for a retry `http.request.resend_count` and `scalws.retry_reason` (why the
 * previous attempt was given up); events for the retry decision and the member's ejection. It
 * ends when the attempt failed, when its answer was dropped for a retry, or when the answer it
 * delivered has been sent whole, whichever of delivery and the body's end comes last.
 *
 * Made only for a traced request: an untraced one pays one null check per attempt.
 *
 * @module
 */

import type { MemberAddress } from "../net/mod.ts";
import { type Span, SPAN_KIND_CLIENT, spanMethod, STATUS_ERROR } from "../tracing/mod.ts";

/** What an attempt span is started with. */
export interface AttemptSpanInit {
  readonly method: string;
  /** `http` or `fastcgi` (the span's name and `network.protocol.name`). */
  readonly protocol: "http" | "fastcgi";
  readonly address: MemberAddress;
  /** The pool's name; "" for a single address. */
  readonly pool: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** Why the previous attempt was given up (`connect`, `timeout`, `status`, ...); "" for none. */
  readonly retryReason: string;
}

/** Body end against delivery: neither yet, the body ended first, delivery came first. */
const OPEN = 0;
const BODY_ENDED = 1;
const DELIVERED = 2;

/** One attempt's span and when it ends; see the module comment. */
export class AttemptSpan {
  private state = OPEN;

  private constructor(readonly span: Span) {}

  /** Starts the span of an attempt under `parent` (the request's server span). */
  static start(parent: Span, init: AttemptSpanInit): AttemptSpan {
    const fcgi = init.protocol === "fastcgi";
    const method = spanMethod(init.method);
    const span = parent.child(fcgi ? "fastcgi " + method.name : method.name, SPAN_KIND_CLIENT);
    span.set("http.request.method", method.attribute);
    if (method.original !== undefined) span.set("http.request.method_original", method.original);
    span.set("network.protocol.name", init.protocol);
    const a = init.address;
    if (a.kind === "tcp") {
      span.set("server.address", a.hostname);
      span.set("server.port", a.port);
    } else {
      span.set("server.address", a.path);
      span.set("network.transport", "unix");
    }
    if (init.pool !== "") span.set("scalws.pool", init.pool);
    span.set("scalws.attempt", init.attempt);
    if (init.attempt > 1) span.set("http.request.resend_count", init.attempt - 1);
    if (init.retryReason !== "") span.set("scalws.retry_reason", init.retryReason);
    return new AttemptSpan(span);
  }

  /** The `traceparent` the member gets: this attempt as its parent. */
  traceparent(): string {
    return this.span.traceparent();
  }

  /** The member answered `status`. */
  answered(status: number): void {
    this.span.set("http.response.status_code", status);
    if (status >= 400) {
      this.span.status = STATUS_ERROR;
      this.span.set("error.type", String(status));
    }
  }

  /** The attempt failed without an answer (`kind`: `connect`, `timeout`, ...): ends it. */
  failed(kind: string): void {
    this.span.status = STATUS_ERROR;
    this.span.set("error.type", kind);
    this.span.finish();
  }

  /** Another member gets the request because of this attempt's `reason`. */
  retry(reason: string): void {
    this.span.event("retry", ["scalws.retry_reason", reason]);
  }

  /** This attempt's outcome ejected `member` from `pool`. */
  ejected(member: string, pool: string): void {
    this.span.event("ejection", ["scalws.member", member, "scalws.pool", pool]);
  }

  /** The answer was dropped (another member gets the request): ends it. */
  dropped(): void {
    this.span.finish();
  }

  /** The answer goes to the client: ends it now if its body is already done. */
  delivered(): void {
    if (this.state === BODY_ENDED) this.span.finish();
    else this.state = DELIVERED;
  }

  /** The answer's body ended (`broken`: the member cut it). */
  bodyEnded(broken: boolean): void {
    if (broken && !this.span.finished) {
      this.span.status = STATUS_ERROR;
      this.span.set("error.type", "body");
    }
    if (this.state === DELIVERED) this.span.finish();
    else this.state = BODY_ENDED;
  }
}
