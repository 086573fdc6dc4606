/**
 * The proxy to a single address (`proxy: {address: ...}` or `url`): one attempt per request over
 * that address's connection pool, with no retry, no health and nothing to report to a pool. The
 * attempt loop is `proxy_loop.ts`'s.
 *
 * @module
 */

import type { Answer } from "../front/mod.ts";
import type { AddressTarget, ProxyRuntime } from "../config/mod.ts";
import type { ConnPool } from "../http1/mod.ts";
import type { MemberAddress } from "../net/mod.ts";
import type { Exchange, Handler } from "../pipeline/mod.ts";
import { type BodyRule, prepareBody, type PreparedBody } from "./proxy_body.ts";
import { clientBodyFailed } from "./proxy_common.ts";
import { Attempt, proxyLoop } from "./proxy_loop.ts";
import { isWebSocketUpgrade } from "./websocket.ts";

/** The one attempt of a single-address request: no retry, no health, nothing to report. */
class AddressAttempt extends Attempt {
  readonly conns: ConnPool;
  readonly authority: string;
  readonly upgrade: boolean;
  readonly address: MemberAddress;
  readonly poolName = "";

  constructor(h: AddressProxyHandler, ex: Exchange, readonly body: PreparedBody) {
    super(ex, h.runtime);
    this.conns = h.conns;
    this.authority = h.target.authority;
    this.address = h.target.address;
    this.upgrade = h.runtime.websocket && isWebSocketUpgrade(ex.req);
    // No `ex.attempt`: the access log's `upstream_member` and `upstream_attempts` are a pool's
    // (`-` and 0 for a request that did not go through a pool, as the load-balancing guide says).
  }

  failed(): boolean {
    return false;
  }
  answered(): boolean {
    return false;
  }
  next(): null {
    return null;
  }
  delivered(): undefined {
    return undefined;
  }
  gaveUp(): void {}
  protected ended(): void {}
}

/** What the single-address handler is built from. */
export interface AddressProxyInit {
  readonly runtime: ProxyRuntime;
  readonly target: AddressTarget;
  /** The target's keep-alive connections, shared by every route that names it. */
  readonly conns: ConnPool;
  /** The route's `max_body`. */
  readonly maxBody: number;
}

/**
 * The single-address form (`upstream: "http://..."`): one member, no retries, no ejection,
 * the shortest path through the proxy.
 */
export class AddressProxyHandler implements Handler {
  readonly runtime: ProxyRuntime;
  readonly target: AddressTarget;
  readonly conns: ConnPool;
  /** Bodies stream to the one attempt. */
  private readonly bodies: BodyRule;

  constructor(init: AddressProxyInit) {
    this.runtime = init.runtime;
    this.target = init.target;
    this.conns = init.conns;
    this.bodies = { maxBody: init.maxBody, keep: false, keepWithin: 0 };
  }

  handle(ex: Exchange): Promise<Answer> | Answer {
    const body = prepareBody(ex, this.bodies);
    if (body instanceof Promise) return body.then((b) => this.send(ex, b));
    return this.send(ex, body);
  }

  private send(ex: Exchange, body: PreparedBody | number): Promise<Answer> | Answer {
    if (typeof body === "number") return clientBodyFailed(ex, body);
    return proxyLoop(new AddressAttempt(this, ex, body));
  }
}
