/**
 * A named pool of members: its settings, the current member set (one immutable snapshot,
 * swapped whole), the balancer, passive and active health, affinity and the retry decision.
 * A handler asks it to `start` a request, to `choose` a member per attempt, to `report` each
 * outcome and whether to `retry`; the pool owns the health and metrics decisions. It lives in the registry
 * (`registry.ts`) across generations while its settings stay the same.
 *
 * It does not talk to members: connections and the HTTP/1.1 client are `http1/`'s, the
 * attempt loop is the handler's (`handlers/proxy_loop.ts`).
 *
 * @module
 */

import type { MemberConfig, PoolConfig } from "../config/mod.ts";
import { latencyBucket, PoolHistory } from "./pool_history.ts";
import { dropFcgiSeries, FcgiConns } from "../fastcgi/mod.ts";
import { Connector, type TlsSettings } from "../http1/mod.ts";
import { log, type Metrics, type Series } from "../observe/mod.ts";
import { type AffinityKey, affinityValue } from "./affinity.ts";
import { createBalancer } from "./balance/index.ts";
import { normalizeClientIp, rendezvousScore } from "./balance/hash.ts";
import { Member } from "./member.ts";
import type { Clock } from "../base/mod.ts";
import { Prober } from "./active_health.ts";
import { AvailabilityVersion } from "./availability_version.ts";
import { ActiveHealthState } from "./active_health_state.ts";
import { type PemReader, poolTls } from "./member_tls.ts";
import { type MemberTry, PoolRequest, type RequestFacts } from "./pool_request.ts";
import { type FailureKind, mayRetry } from "./retry_policy.ts";
import { type SessionAffinity, sessionAffinity } from "./session_affinity.ts";
import type { MemberSet, PlannedSet } from "./member_set.ts";

export type { MemberSet, PlannedSet } from "./member_set.ts";

/** What every pool of a process shares. */
export interface PoolDeps {
  readonly metrics: Metrics;
  readonly key: AffinityKey;
  readonly clock: Clock;
}

/** What `new Pool` builds from. */
export interface PoolInit {
  readonly settings: PoolConfig;
  readonly deps: PoolDeps;
  /** Reads `tls.ca_file`, once, at construction; every member shares the resulting settings. */
  readonly readPem: PemReader;
  /** Idle timeout (ms) of the connections of members created from now on. */
  readonly idleTimeout: number;
}

/**
 * How an attempt ended, for `Pool.report`: a status from 100 to 599 is the member's answer;
 * the other values are these. Numbers, so that reporting allocates nothing.
 */
export const Outcome = {
  /** A connect error or timeout: a failure that active health's `fall` counts too. */
  CONNECT_FAILED: -1,
  /** No answer: the connection broke or timed out after connecting, before a response head. */
  NO_ANSWER: 0,
  /** The streamed body of an answer ended: the member succeeded. */
  BODY_DONE: -2,
  /** The streamed body of an answer broke: a failure. */
  BODY_BROKEN: -3,
} as const;

/** The settings that decide whether a reload keeps a pool: everything except `members`. */
export function settingsKey(cfg: PoolConfig): string {
  const { members: _m, ...rest } = cfg;
  return JSON.stringify(rest);
}

/**
 * A named pool: settings, the current member set and the TLS settings its members share.
 * Lives in the registry across generations while its settings stay the same.
 */
export class Pool {
  set: MemberSet;
  readonly key: string;
  /** Changes whenever a member's availability may have changed (cooldown ends included). */
  readonly availability = new AvailabilityVersion();
  private readonly tls: TlsSettings | null;
  private live = false;
  /** Active health checks, when the pool has `health_check`. */
  prober: Prober | null = null;
  private retrySeries: Series | null = null;
  private membersSeries: Series | null = null;
  private durationSeries: ReturnType<Metrics["upstreamDuration"]["with"]> | null = null;

  readonly settings: PoolConfig;
  /** Rates, p99 and events for the console; a rebuilt pool takes over its predecessor's. */
  history = new PoolHistory();
  /**
   * Owned by something else than the registry (the workers of a supervised application): the
   * registry lists it but never retires it.
   */
  external = false;
  /** Idle timeout (ms) of the connections of members created from now on. */
  idleTimeout: number;
  /** The affinity cookie (sticky pin or hash cookie), or null. */
  private readonly affinity: SessionAffinity | null;
  private readonly deps: PoolDeps;

  constructor(init: PoolInit) {
    const settings = init.settings;
    this.settings = settings;
    this.deps = init.deps;
    this.idleTimeout = init.idleTimeout;
    this.key = settingsKey(settings);
    this.tls = poolTls(settings, init.readPem);
    this.affinity = sessionAffinity(settings, init.deps);
    const first = this.plan(settings.members);
    this.set = { ...first, balancer: createBalancer(settings.balance, first.members) };
  }

  get name(): string {
    return this.settings.name;
  }

  /** The member list as configuration entries (what an api pool carries into a rebuilt pool). */
  memberConfigs(): MemberConfig[] {
    return this.set.members.map((m) => ({
      address: m.address,
      parsed: m.parsed,
      weight: m.weight,
      ...(m.conns instanceof FcgiConns && m.conns.maxConns > 0
        ? { max_conns: m.conns.maxConns }
        : {}),
    }));
  }

  /**
   * Builds a member set beside the current one; members that keep their address are reused,
   * new ones get connections with `idleTimeout` (default: the pool's).
   */
  plan(list: readonly MemberConfig[], idleTimeout: number = this.idleTimeout): PlannedSet {
    const old = this.set?.byAddress;
    const members: Member[] = [];
    const byAddress = new Map<string, Member>();
    const byAffinity = new Map<string, Member>();
    for (const m of list) {
      let member = old?.get(m.address);
      if (member === undefined) {
        const init = {
          pool: this.name,
          address: m.address,
          parsed: m.parsed,
          weight: m.weight,
          affinity: affinityValue(this.deps.key, m.address),
        };
        const connector = new Connector(m.parsed, this.tls);
        member = this.settings.protocol === "fastcgi"
          ? new Member({
            ...init,
            conns: new FcgiConns(connector, {
              address: m.address,
              maxConns: m.max_conns ?? 0,
              maxQueue: this.settings.max_queue,
            }),
          })
          : Member.create({ ...init, connector, keepalive: this.settings.keepalive, idleTimeout });
      }
      if (this.settings.health_check !== undefined) member.active ??= new ActiveHealthState();
      members.push(member);
      byAddress.set(m.address, member);
      byAffinity.set(member.affinity, member);
    }
    return { members, byAddress, byAffinity };
  }

  /**
   * Swaps in a planned set with a balancer built for it: weights take their new values,
   * removed members close their idle connections and lose their series. Requests in flight
   * keep the set and objects they hold.
   */
  install(next: PlannedSet, weights: readonly MemberConfig[]): void {
    for (const m of weights) {
      const member = next.byAddress.get(m.address);
      if (member === undefined) continue;
      member.weight = m.weight;
      if (member.conns instanceof FcgiConns) member.conns.maxConns = m.max_conns ?? 0;
    }
    const prev = this.set;
    this.set = { ...next, balancer: createBalancer(this.settings.balance, next.members) };
    this.availability.bump();
    const now = this.deps.clock.now();
    for (const m of prev.members) {
      if (!next.byAddress.has(m.address)) {
        this.retireMember(m);
        this.history.event(now, "removed", m.address);
      }
    }
    for (const m of next.members) {
      if (!prev.byAddress.has(m.address)) this.history.event(now, "added", m.address);
    }
    if (this.live) {
      for (const m of next.members) {
        if (!prev.byAddress.has(m.address)) m.attach(this.deps.metrics);
      }
      this.membersSeries!.value = next.members.length;
    }
  }

  /** Creates the pool's series once it serves traffic (never for a refused reload). */
  activate(): void {
    if (this.live) return;
    this.live = true;
    const m = this.deps.metrics;
    this.retrySeries = m.poolRetries.with(this.name);
    this.membersSeries = m.poolMembers.with(this.name);
    this.durationSeries = m.upstreamDuration.with(this.name);
    this.membersSeries.value = this.set.members.length;
    for (const member of this.set.members) member.attach(m);
    const hc = this.settings.health_check;
    if (hc !== undefined) {
      this.prober = new Prober(this.name, hc, () => this.set.members, (member) => {
        this.availability.bump();
        member.publishHealth(this.deps.clock.now());
      }, this.deps.clock);
      this.prober.start();
    }
  }

  /** The pool left the configuration (or was rebuilt): close idle connections, drop series. */
  retire(): void {
    this.prober?.stop();
    this.prober = null;
    for (const m of this.set.members) this.retireMember(m);
    if (this.live) {
      const m = this.deps.metrics;
      m.poolRetries.remove(this.name);
      m.poolMembers.remove(this.name);
      m.upstreamDuration.remove(this.name);
      if (this.settings.protocol === "fastcgi") dropFcgiSeries(m, this.name);
    }
    this.live = false;
  }

  // --- The decisions of the request path: choose, report, retry. ---

  /**
   * Starts a request on the current member set: resolves its affinity cookie and hash key.
   * `upgrade` (a WebSocket handshake) goes to one member and is never retried.
   */
  start(facts: RequestFacts, upgrade: boolean): PoolRequest {
    const set = this.set;
    const settings = this.settings;
    const r = new PoolRequest(set, facts);
    const n = set.members.length;
    r.retryable = !upgrade && n > 1 && settings.retries > 0;
    const hash = settings.hash;
    if (hash !== undefined && hash.by !== "cookie") {
      r.key = hash.by === "header"
        ? facts.req.headers.get(hash.name) ?? undefined
        : normalizeClientIp(facts.client);
    }
    // A valid sticky pin or affinity cookie naming a live member wins over the policy.
    const affinity = this.affinity;
    if (affinity !== null && n > 0) {
      r.held = affinity.held(facts.req.headers.get("cookie"), this.deps.clock.now());
      if (r.held !== undefined) r.pinned = set.byAffinity.get(r.held);
    }
    return r;
  }

  /**
   * The member for the request's next attempt, now in flight, or undefined when every member
   * was tried: the pinned member while available, else the policy's pick, else (health alone
   * never refuses traffic) the member ejected longest ago.
   */
  choose(r: PoolRequest): Member | undefined {
    const now = this.deps.clock.now();
    r.now = now;
    r.healthVersion = this.availability.current(now);
    const tried = r.tried;
    const pinned = r.pinned;
    let m: Member | undefined;
    if (pinned !== undefined && (tried === null || !tried.has(pinned)) && pinned.available(now)) {
      m = pinned;
    } else {
      m = r.set.balancer.pick(r) ?? longestEjected(r.set.members, r);
    }
    if (m === undefined) return undefined;
    if (r.attempts === 0) r.started = performance.now();
    else this.countRetry();
    r.attempts++;
    r.current = m;
    r.epoch = m.health.begin();
    m.inflight++;
    this.set.balancer.inflightChanged?.(m);
    return m;
  }

  /** An attempt on `m` is over: it no longer counts as in flight. */
  release(m: Member): void {
    m.inflight--;
    this.set.balancer.inflightChanged?.(m);
  }

  /**
   * Records how an attempt ended (`Outcome`, or the member's status): counts it by class and
   * feeds passive health. A 502, 503 or 504 is a failure; another answer a success, or, when
   * its body streams, whatever the body's end reports. Returns true when this outcome ejected
   * the member (a tracing event).
   */
  report(t: MemberTry, outcome: number): boolean {
    const m = t.member;
    if (outcome >= 100) {
      m.countAttempt(outcome);
      if (outcome === 502 || outcome === 503 || outcome === 504) return this.failed(m, t.epoch);
      if (t.streaming) t.verdictPending = true;
      else this.succeeded(m, t.epoch);
      return false;
    }
    if (outcome === Outcome.BODY_DONE || outcome === Outcome.BODY_BROKEN) {
      if (!t.verdictPending) return false;
      t.verdictPending = false;
      if (outcome === Outcome.BODY_DONE) this.succeeded(m, t.epoch);
      else return this.failed(m, t.epoch);
      return false;
    }
    m.countAttempt(0);
    const ejected = this.failed(m, t.epoch);
    // Live-traffic connect failures count towards active health's `fall` too.
    if (outcome === Outcome.CONNECT_FAILED && this.prober !== null) this.prober.record(m, false);
    return ejected;
  }

  /**
   * Whether the request's latest attempt, failed as `failure`, goes to another member (the
   * spec's retry rules); nothing was sent to the client yet.
   */
  retry(r: PoolRequest, failure: FailureKind): boolean {
    const member = r.current!;
    const limit = r.retryable && r.replayable ? 1 + this.settings.retries : 1;
    if (r.attempts >= limit) return false;
    const n = r.set.members.length;
    const tried = r.tried === null ? 1 : r.tried.size + (r.tried.has(member) ? 0 : 1);
    const again = mayRetry({
      attempts: r.attempts,
      retries: this.settings.retries,
      memberCount: n,
      untriedExists: tried < n,
      sentToClient: false,
      method: r.facts.req.method,
      failure,
      bodyReplayable: r.replayable,
      websocket: false,
    });
    if (again) (r.tried ??= new Set()).add(member);
    return again;
  }

  /**
   * The request is over (answered, or every attempt failed): observes its duration. Returns the
   * affinity `Set-Cookie` for an answer from `answered`, if one is due.
   */
  finish(r: PoolRequest, answered: Member | null): string | undefined {
    const ms = performance.now() - r.started;
    this.observeDuration(ms / 1000);
    if (answered !== null) answered.latency[latencyBucket(ms)]++;
    if (answered === null || this.affinity === null) return undefined;
    return this.affinity.cookie(r.held, answered.affinity, r.facts.secure);
  }

  /**
   * Records a member failure; logs and republishes only when the ejection state flipped.
   * Returns true when it ejected the member.
   */
  private failed(m: Member, epoch: number): boolean {
    const now = this.deps.clock.now();
    if (!m.health.failure(epoch, now, this.settings.passive_health)) return false;
    this.availability.bump();
    if (m.health.isEjected(now)) this.availability.expireAt(m.health.ejectedUntil);
    m.publishHealth(now);
    if (!m.health.isEjected(now)) return false;
    this.history.event(now, "ejected", m.address);
    log("warn", "member_ejected", {
      pool: this.name,
      member: m.address,
      until: new Date(m.health.ejectedUntil).toISOString(),
    });
    return true;
  }

  /** Records a member success; logs and republishes only when it restored the member. */
  private succeeded(m: Member, epoch: number): void {
    const now = this.deps.clock.now();
    if (m.health.success(epoch, now)) {
      this.availability.bump();
      m.publishHealth(now);
      this.history.event(now, "restored", m.address);
      log("info", "member_restored", { pool: this.name, member: m.address });
    }
  }

  private countRetry(): void {
    if (this.retrySeries !== null) this.retrySeries.value++;
  }

  private observeDuration(seconds: number): void {
    if (this.durationSeries !== null) this.durationSeries.observe(seconds);
  }

  /** Refreshes the per-member gauges that depend on time (ejection ends by itself). */
  collect(now: number): void {
    for (const m of this.set.members) m.publishHealth(now);
  }

  private retireMember(m: Member): void {
    m.removed = true;
    m.conns.close();
    if (this.live) m.detach(this.deps.metrics);
  }
}

/**
 * The untried, unavailable member ejected longest ago. Ties (members only active checks keep
 * out were never ejected) go in preference order: the key's rendezvous order in a hash pool, so
 * a client keeps its member while every member is down; else list order.
 */
function longestEjected(members: readonly Member[], r: PoolRequest): Member | undefined {
  const tried = r.tried;
  const key = r.key;
  let best: Member | undefined;
  let bestScore = 0;
  for (const c of members) {
    if ((tried !== null && tried.has(c)) || c.available(r.now)) continue;
    const at = c.health.ejectedAt;
    if (best !== undefined && at > best.health.ejectedAt) continue;
    if (key === undefined || key === "") {
      if (best === undefined || at < best.health.ejectedAt) best = c;
      continue;
    }
    const score = rendezvousScore(key, c.address, c.weight);
    if (best === undefined || at < best.health.ejectedAt || score > bestScore) {
      best = c;
      bestScore = score;
    }
  }
  return best;
}
