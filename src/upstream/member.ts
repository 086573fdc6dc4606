/**
 * A member of a pool (`Member`): its canonical address, connections, in-flight count, passive and
 * active health and per-member series, the same object kept across reloads and run-time member
 * changes that keep the address.
 *
 * @module
 */

import type { MemberAddress } from "../net/mod.ts";
import { latencyBuckets } from "./pool_history.ts";
import { type Connector, ConnPool } from "../http1/mod.ts";
import { FcgiConns } from "../fastcgi/mod.ts";
import type { Metrics, Series } from "../observe/mod.ts";
import { ActiveHealthState } from "./active_health_state.ts";
import { PassiveHealth } from "./passive_health.ts";
import type { Candidate } from "./types.ts";

/** Status classes of `scalws_upstream_requests_total`, by `status / 100` (0: no answer). */
const CLASSES = ["error", "1xx", "2xx", "3xx", "4xx", "5xx"];

/** What a member is made of (`new Member`). */
export interface MemberInit {
  /** The pool's name (for metric labels and logs). */
  readonly pool: string;
  /** Canonical address, the member's identity. */
  readonly address: string;
  readonly parsed: MemberAddress;
  /** 1..1000; changes when a new list gives the same address another weight. */
  readonly weight: number;
  /** The member's keep-alive connections. */
  readonly conns: ConnPool;
  /** Affinity cookie value: HMAC of the canonical address (`affinityValue`). */
  readonly affinity: string;
}

/** A member whose connection pool is still to be made (`Member.create`). */
export interface NewMemberInit extends Omit<MemberInit, "conns"> {
  readonly connector: Connector;
  /** Idle connections kept (the pool's `keepalive`). */
  readonly keepalive: number;
  /** Idle connections older than this (ms) are closed. */
  readonly idleTimeout: number;
}

/**
 * A member of a pool: its identity (canonical address), its connections, its load and its
 * health. The same object survives reloads and run-time member changes that keep the address.
 */
export class Member implements Candidate {
  inflight = 0;
  readonly health = new PassiveHealth();
  /** Present when the pool has active health checks. */
  active: ActiveHealthState | null = null;
  /** Set when the member left the pool; its connections close as requests finish. */
  removed = false;
  /** Attempts counted (every class), for the console's requests per second. */
  attempts = 0;
  /** Answers by latency bucket (`pool_history.ts`), for the console's p99. */
  readonly latency: Uint32Array = latencyBuckets();
  private byClass: (Series | null)[] = [null, null, null, null, null, null];
  private metrics: Metrics | null = null;
  private ejectedSeries: Series | null = null;
  private healthySeries: Series | null = null;

  readonly pool: string;
  /** Canonical address, the member's identity. */
  readonly address: string;
  readonly parsed: MemberAddress;
  weight: number;
  readonly conns: ConnPool;
  /** Affinity cookie value: HMAC of the canonical address. */
  readonly affinity: string;

  constructor(init: MemberInit) {
    this.pool = init.pool;
    this.address = init.address;
    this.parsed = init.parsed;
    this.weight = init.weight;
    this.conns = init.conns;
    this.affinity = init.affinity;
  }

  /** A member with a new connection pool over `connector`. */
  static create(init: NewMemberInit): Member {
    const conns = new ConnPool(init.connector, {
      maxIdle: init.keepalive,
      idleTimeout: init.idleTimeout,
    });
    return new Member({ ...init, conns });
  }

  /** The Host sent to this member unless `preserve_host`: its address, or `localhost` for `unix:`. */
  get authority(): string {
    return this.parsed.kind === "unix" ? "localhost" : this.address;
  }

  available(now: number): boolean {
    return !this.health.isEjected(now) && (this.active === null || this.active.up);
  }

  /** Creates this member's metric series (when its pool goes live). */
  attach(m: Metrics): void {
    this.metrics = m;
    if (this.conns instanceof FcgiConns) this.conns.attach(m, this.pool);
    // The spec's classes exist from the start; `1xx` (a 101 upgrade) only once seen.
    for (let i = 0; i < CLASSES.length; i++) {
      if (i !== 1) this.byClass[i] = m.upstreamRequests.with(this.pool, this.address, CLASSES[i]);
    }
    this.ejectedSeries = m.memberEjected.with(this.pool, this.address);
    this.healthySeries = m.memberHealthy.with(this.pool, this.address);
    this.ejectedSeries.value = this.health.ejectedUntil > 0 ? 1 : 0;
    this.healthySeries.value = 1;
  }

  /** Drops this member's metric series (it left the pool or the pool is gone). */
  detach(m: Metrics): void {
    this.metrics = null;
    for (const c of CLASSES) {
      m.upstreamRequests.remove(this.pool, this.address, c);
    }
    m.memberEjected.remove(this.pool, this.address);
    m.memberHealthy.remove(this.pool, this.address);
    this.byClass = [null, null, null, null, null, null];
    this.ejectedSeries = null;
    this.healthySeries = null;
  }

  /** Counts an attempt: `status` 0 means no answer (error). */
  countAttempt(status: number): void {
    this.attempts++;
    const i = status === 0 ? 0 : (status / 100) | 0;
    let s = this.byClass[i];
    if (s === null && this.metrics !== null && i === 1) {
      s = this.byClass[1] = this.metrics.upstreamRequests.with(this.pool, this.address, "1xx");
    }
    if (s !== null && s !== undefined) s.value++;
  }

  /** Attempts by class since the member joined (what the console shows). */
  requestCounts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (let i = 0; i < CLASSES.length; i++) out[CLASSES[i]] = this.byClass[i]?.value ?? 0;
    return out;
  }

  /** Refreshes the ejected and healthy gauges after a flip. */
  publishHealth(now: number): void {
    if (this.ejectedSeries !== null) {
      this.ejectedSeries.value = this.health.isEjected(now) ? 1 : 0;
    }
    if (this.healthySeries !== null) this.healthySeries.value = this.available(now) ? 1 : 0;
  }
}
