/**
 * The proxy to a pool (`proxy: {pool: ...}`): the pool chooses a member per attempt, hears each
 * outcome and says whether another member gets the request; this file carries what the attempts of
 * one request share. The loop itself is `proxy_loop.ts`'s.
 *
 * @module
 */

import type { Answer } from "../front/mod.ts";
import type { ProxyRuntime } from "../config/mod.ts";
import type { ConnPool, UpstreamError, UpstreamResponse } from "../http1/mod.ts";
import type { MemberAddress } from "../net/mod.ts";
import type { Exchange, Handler } from "../pipeline/mod.ts";
import { plain } from "../base/mod.ts";
import {
  failureKind,
  type Member,
  type MemberTry,
  Outcome,
  type Pool,
  type PoolRequest,
} from "../upstream/mod.ts";
import { type BodyRule, prepareBody, type PreparedBody } from "./proxy_body.ts";
import { clientBodyFailed, reason } from "./proxy_common.ts";
import { Attempt, proxyLoop } from "./proxy_loop.ts";
import { isWebSocketUpgrade } from "./websocket.ts";

/** One request through a pool: what its attempts share. */
class PoolCall {
  request!: PoolRequest;
  body!: PreparedBody;
  /** A WebSocket handshake: one member, never retried. */
  upgrade = false;
  constructor(readonly handler: PoolProxyHandler, readonly ex: Exchange) {}
}

/**
 * One attempt on one member: holds the member in flight until its response body ends, and
 * passes outcomes to the pool, which decides health, metrics and retries.
 */
class PoolAttempt extends Attempt implements MemberTry {
  private open = true;
  streaming = false;
  verdictPending = false;
  readonly epoch: number;

  constructor(private readonly call: PoolCall, readonly member: Member) {
    const ex = call.ex;
    super(ex, call.handler.runtime);
    this.epoch = call.request.epoch;
    ex.attempt(member.address);
  }

  get conns(): ConnPool {
    return this.member.conns;
  }
  get authority(): string {
    return this.member.authority;
  }
  get address(): MemberAddress {
    return this.member.parsed;
  }
  get poolName(): string {
    return this.call.handler.pool.name;
  }
  get body(): PreparedBody {
    return this.call.body;
  }
  get upgrade(): boolean {
    return this.call.upgrade;
  }

  failed(err: UpstreamError): boolean {
    const pool = this.call.handler.pool;
    const outcome = err.phase === "connect" ? Outcome.CONNECT_FAILED : Outcome.NO_ANSWER;
    if (pool.report(this, outcome)) this.trace?.ejected(this.member.address, pool.name);
    return pool.retry(this.call.request, failureKind(err));
  }

  answered(res: UpstreamResponse): boolean {
    const pool = this.call.handler.pool;
    const s = res.status;
    this.streaming = res.reader !== undefined || res.body instanceof ReadableStream;
    if (pool.report(this, s)) this.trace?.ejected(this.member.address, pool.name);
    return (s === 502 || s === 503 || s === 504) && pool.retry(this.call.request, "status");
  }

  next(): PoolAttempt | null {
    const m = this.call.handler.pool.choose(this.call.request);
    return m === undefined ? null : new PoolAttempt(this.call, m);
  }

  delivered(): string | undefined {
    return this.call.handler.pool.finish(this.call.request, this.member);
  }

  gaveUp(): void {
    this.call.handler.pool.finish(this.call.request, null);
  }

  /** Releases the member (once); a streamed body's end settles a pending verdict. */
  protected ended(ok: boolean, cancelled: boolean): void {
    if (!this.open) return;
    this.open = false;
    const pool = this.call.handler.pool;
    pool.release(this.member);
    // A body that broke after the head is a failure, so a member that always cuts its
    // bodies gets ejected; a client that stopped reading says nothing about the member.
    if (cancelled) return;
    if (pool.report(this, ok ? Outcome.BODY_DONE : Outcome.BODY_BROKEN)) {
      this.trace?.ejected(this.member.address, pool.name);
    }
  }
}

/** What a pool handler is built from. */
export interface PoolProxyInit {
  readonly runtime: ProxyRuntime;
  readonly pool: Pool;
  /** The route's `max_body`. */
  readonly maxBody: number;
}

/**
 * Proxies to a named pool: the pool chooses each member (affinity, policy, health), the loop
 * tries it, and the pool hears every outcome and decides whether another member gets the
 * request.
 */
export class PoolProxyHandler implements Handler {
  readonly runtime: ProxyRuntime;
  readonly pool: Pool;
  /** Bodies of requests that may be retried: small ones are kept to be sent again. */
  private readonly kept: BodyRule;
  /** Bodies of requests sent once: streamed. */
  private readonly once: BodyRule;

  constructor(init: PoolProxyInit) {
    this.runtime = init.runtime;
    this.pool = init.pool;
    const maxBody = init.maxBody;
    this.kept = { maxBody, keep: true, keepWithin: init.runtime.response_timeout };
    this.once = { maxBody, keep: false, keepWithin: 0 };
  }

  handle(ex: Exchange): Promise<Answer> | Answer {
    const rt = this.runtime;
    const call = new PoolCall(this, ex);
    call.upgrade = rt.websocket && isWebSocketUpgrade(ex.req);
    const r = call.request = this.pool.start(ex, call.upgrade);
    if (r.set.members.length === 0) {
      ex.answered(503);
      return plain(503, "Service Unavailable: the pool has no members", { "retry-after": "1" });
    }
    const body = prepareBody(ex, r.retryable ? this.kept : this.once);
    if (body instanceof Promise) return body.then((b) => this.send(call, b));
    return this.send(call, body);
  }

  private send(call: PoolCall, body: PreparedBody | number): Promise<Answer> | Answer {
    if (typeof body === "number") return clientBodyFailed(call.ex, body);
    call.body = body;
    call.request.replayable = body.replayable;
    const m = this.pool.choose(call.request);
    if (m === undefined) return noMember(call);
    return proxyLoop(new PoolAttempt(call, m));
  }
}

/** No member to try at all (cannot happen while the set has members): 502. */
function noMember(call: PoolCall): Response {
  call.handler.pool.finish(call.request, null);
  call.ex.answered(502);
  return plain(502, reason(502));
}
