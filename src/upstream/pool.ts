import type { MemberConfig, PoolConfig } from "../config/types.ts";
import { Connector } from "../http1/connector.ts";
import type { TlsSettings } from "../http1/types.ts";
import type { Metrics } from "../observe/families.ts";
import type { Series } from "../observe/metrics.ts";
import { type AffinityKey, affinityValue } from "./affinity.ts";
import { createBalancer } from "./balance/index.ts";
import { Member } from "./member.ts";
import type { Clock } from "../base/clock.ts";
import type { Balancer } from "./types.ts";
import { Prober } from "./active_health.ts";
import { AvailabilityVersion } from "./availability_version.ts";
import { ActiveHealthState } from "./active_health_state.ts";
import { type PemReader, poolTls } from "./member_tls.ts";

/** A member set before its balancer is built: what planning produces. */
export interface PlannedSet {
  readonly members: readonly Member[];
  /** Affinity cookie value -> member. */
  readonly byAffinity: ReadonlyMap<string, Member>;
  readonly byAddress: ReadonlyMap<string, Member>;
}

/** One immutable member set of a pool; replaced whole, never edited. */
export interface MemberSet extends PlannedSet {
  readonly balancer: Balancer<Member>;
}

/** What every pool of a process shares. */
export interface PoolDeps {
  readonly metrics: Metrics;
  readonly key: AffinityKey;
  /** Idle timeout of new member connections (`server.upstream_client.idle_timeout`). */
  idleTimeout: number;
  readonly clock: Clock;
}

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

  /** `readPem` reads `tls.ca_file`, once, here; every member shares the resulting settings. */
  constructor(readonly settings: PoolConfig, private readonly deps: PoolDeps, readPem: PemReader) {
    this.key = settingsKey(settings);
    this.tls = poolTls(settings, readPem);
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
    }));
  }

  /** Builds a member set beside the current one; members that keep their address are reused. */
  plan(list: readonly MemberConfig[]): PlannedSet {
    const old = this.set?.byAddress;
    const members: Member[] = [];
    const byAddress = new Map<string, Member>();
    const byAffinity = new Map<string, Member>();
    for (const m of list) {
      let member = old?.get(m.address);
      if (member === undefined) {
        member = Member.create(
          this.name,
          m.address,
          m.parsed,
          m.weight,
          new Connector(m.parsed, this.tls),
          this.settings.keepalive,
          this.deps.idleTimeout,
          affinityValue(this.deps.key, m.address),
        );
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
      if (member !== undefined) member.weight = m.weight;
    }
    const prev = this.set;
    this.set = { ...next, balancer: createBalancer(this.settings.balance, next.members) };
    this.availability.bump();
    for (const m of prev.members) {
      if (!next.byAddress.has(m.address)) this.retireMember(m);
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
    }
    this.live = false;
  }

  countRetry(): void {
    if (this.retrySeries !== null) this.retrySeries.value++;
  }

  observeDuration(seconds: number): void {
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
