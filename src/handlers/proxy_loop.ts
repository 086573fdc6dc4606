/**
 * The attempt loop of every proxy form (single address, pool, weighted backends): send, and on
 * a failure let the attempt's decisions (the pool's, for a pool) say whether another member gets
 * the request. Like caddy's `ServeHTTP` -> `proxyLoopIteration`: the loop moves bytes, the
 * pool decides.
 *
 * @module
 */

import type { Answer } from "../front/mod.ts";
import type { ProxyRuntime } from "../config/mod.ts";
import {
  type ConnPool,
  type FinishListener,
  send,
  type SendOptions,
  type SendStats,
  UpstreamError,
  type UpstreamResponse,
  type UpstreamTiming,
} from "../http1/mod.ts";
import type { MemberAddress } from "../net/mod.ts";
import { failureKind } from "../upstream/mod.ts";
import { AttemptSpan } from "./attempt_span.ts";
import type { Exchange } from "../pipeline/mod.ts";
import { plain } from "../base/mod.ts";
import { log } from "../observe/mod.ts";
import type { PreparedBody } from "./proxy_body.ts";
import {
  type AttemptTarget,
  clientBodyFailed,
  errorStatus,
  outbound,
  reason,
  toResponse,
} from "./proxy_common.ts";

/**
 * One attempt on one member: the send options, the end of the response body (release, bytes,
 * the access log) and the decisions the loop asks for. A subclass per proxy form.
 */
export abstract class Attempt implements SendOptions, FinishListener, AttemptTarget {
  readonly onFinish: FinishListener = this;
  readonly connectTimeout: number;
  readonly responseTimeout: number;
  readonly stats: SendStats;
  readonly timing: UpstreamTiming;
  abstract readonly conns: ConnPool;
  abstract readonly authority: string;
  abstract readonly body: PreparedBody;
  abstract readonly upgrade: boolean;
  /** The member's address (the attempt span's `server.address`). */
  abstract readonly address: MemberAddress;
  /** The pool's name; "" for a single address. */
  abstract readonly poolName: string;
  /** The attempt's client span when the request is traced, else null. */
  trace: AttemptSpan | null = null;

  /** The member's interim answers (102, 103) go on to the client. */
  readonly onInterim = (status: number, fields: readonly [string, string][]): void =>
    this.ex.interim(status, fields);

  constructor(readonly ex: Exchange, readonly rt: ProxyRuntime) {
    this.connectTimeout = rt.connect_timeout;
    this.responseTimeout = rt.response_timeout;
    this.stats = ex.stats;
    this.timing = ex;
  }

  /** The member failed this attempt (`err` is not the client's): reports it; true to retry. */
  abstract failed(err: UpstreamError): boolean;
  /** The member answered: reports it; true to drop the answer and retry. */
  abstract answered(res: UpstreamResponse): boolean;
  /** The attempt after a retry was decided, or null when no member is left. */
  abstract next(): Attempt | null;
  /** The answer goes to the client: the `Set-Cookie` to add, if any. */
  abstract delivered(): string | undefined;
  /** Every attempt failed: the client gets scalwsd's own answer. */
  abstract gaveUp(): void;
  /** Called once when the response body is done, or the attempt is dropped (`release`). */
  /** `cancelled`: the client stopped reading the body, which says nothing about the member. */
  protected abstract ended(ok: boolean, cancelled: boolean): void;

  bodyFinished(
    ok: boolean,
    bytes: number,
    cancelled = false,
    surplus = false,
    error?: unknown,
  ): void {
    this.ended(ok, cancelled);
    if (!ok && !cancelled) logFailure(this, "body", error, false);
    if (this.trace !== null) this.trace.bodyEnded(!ok && !cancelled);
    // Bytes past the answer's end: a lying Content-Length, never cached.
    if (surplus) this.ex.memberOverran();
    this.ex.sent(bytes);
    if (this.ex.deferred) this.ex.complete();
  }

  /** Drops the attempt (idempotent with the end of its body). */
  release(): void {
    this.ended(true, false);
  }
}

/**
 * Logs a failed attempt as `proxy_failed`: the application, the pool (`-` for a single
 * address), the member, the phase it failed in (`connect`, `write`, `head`, `body`), the kind
 * and message of the failure, and whether another member gets the request (`retry`).
 */
function logFailure(a: Attempt, phase: string, err: unknown, retry: boolean): void {
  const ex = a.ex;
  log("warn", "proxy_failed", {
    tenant: ex.stats.tenant,
    app: ex.stats.app,
    pool: a.poolName || "-",
    member: a.address.canonical,
    phase,
    kind: err instanceof UpstreamError ? err.kind : "error",
    error: err instanceof Error ? err.message : String(err ?? "the response body broke"),
    retry,
  });
}

/**
 * Sends the request through `first` and the attempts it leads to; answers with the member's
 * response, or with the last failure's 502/504 (or the dropped answer's status) when every
 * attempt failed.
 */
export async function proxyLoop(first: Attempt): Promise<Answer> {
  const ex = first.ex;
  let last = first;
  let a: Attempt | null = first;
  let status = 502;
  // Tracing: the attempt's number and why the previous one was given up.
  let n = 0;
  let why = "";
  while (a !== null) {
    last = a;
    n++;
    const span = ex.span;
    const trace = span === null ? null : a.trace = AttemptSpan.start(span, {
      method: ex.req.method,
      protocol: "http",
      address: a.address,
      pool: a.poolName,
      attempt: n,
      retryReason: why,
    });
    let res: UpstreamResponse;
    try {
      res = await send(a.conns, outbound(a), a);
    } catch (err) {
      a.release();
      if (!(err instanceof UpstreamError)) throw err;
      // The client's body failed: neutral for the member, never retried.
      if (err.kind === "client") {
        trace?.failed("client_body");
        return clientBodyFailed(ex, a.body.clientFailure(err) || 400);
      }
      status = errorStatus(err);
      const again = a.failed(err);
      logFailure(a, err.phase, err, again);
      if (trace !== null) {
        why = failureKind(err);
        if (again) trace.retry(why);
        trace.failed(why);
      }
      a = again ? a.next() : null;
      continue;
    }
    const again = a.answered(res);
    trace?.answered(res.status);
    if (!again) {
      trace?.delivered();
      if (res.upgrade !== undefined) trace?.bodyEnded(false);
      return toResponse(ex, res, a.delivered());
    }
    // Another member gets the request; this answer is dropped (released first, so the
    // cancelled body does not count a second failure).
    a.release();
    if (trace !== null) {
      why = "status";
      trace.retry(why);
      trace.dropped();
    }
    if (res.reader !== undefined) res.reader.cancel();
    else if (res.body instanceof ReadableStream) res.body.cancel().catch(() => {});
    status = res.status;
    a = a.next();
  }
  last.gaveUp();
  ex.answered(status);
  return plain(status, reason(status));
}
