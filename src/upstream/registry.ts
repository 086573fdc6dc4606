/**
 * The registry of pools and single-address connections (`PoolRegistry`), keyed by pool name and
 * canonical address, so that a reload or a run-time member change keeps members, connections and
 * health; a refused reload leaves no trace.
 *
 * @module
 */

import { type Config, type MemberConfig, poolMemberErrors } from "../config/mod.ts";
import type { ConnPool } from "../http1/mod.ts";
import { dropFcgiSeries, FcgiConns } from "../fastcgi/mod.ts";
import { planAddressConns } from "./address_conns.ts";
import type { PemReader } from "./member_tls.ts";
import { type PlannedSet, Pool, type PoolDeps, settingsKey } from "./pool.ts";

/** A kept pool's member change, installed after the generation swap. */
interface PendingMembers {
  readonly pool: Pool;
  readonly set: PlannedSet;
  readonly list: readonly MemberConfig[];
}

/** What a reload will do to the pools and single addresses; built without touching live state. */
export interface PoolPlan {
  readonly pools: ReadonlyMap<string, Pool>;
  readonly pending: readonly PendingMembers[];
  readonly created: readonly Pool[];
  readonly retired: readonly Pool[];
  /** Connections of single-address upstreams, by `addressKey`. */
  readonly addresses: ReadonlyMap<string, ConnPool>;
  /** `server.upstream_client.idle_timeout`: for members created once the plan is live. */
  readonly idleTimeout: number;
}

/** What `PoolRegistry.plan` reads besides the configuration. */
export interface PlanOptions {
  /** Pools of supervised applications: listed with the others, never retired here. */
  readonly external?: ReadonlyMap<string, Pool>;
  readonly readPem: PemReader;
  /** Member lists that new `members_from: api` pools start with, by pool name. */
  readonly seeds?: ReadonlyMap<string, readonly MemberConfig[]>;
}

/**
 * Upstream state that outlives generations: pools by name, and the connections of single
 * addresses. Planning builds new pools beside the live ones; `commit` (after the generation
 * swap) installs member lists, gives new pools their series and retires removed or rebuilt
 * ones and the connections of addresses no longer used. A refused reload calls `discard`,
 * which leaves no trace.
 */
export class PoolRegistry {
  pools: ReadonlyMap<string, Pool> = new Map();
  addresses: ReadonlyMap<string, ConnPool> = new Map();

  constructor(readonly deps: PoolDeps) {}

  /**
   * Plans `config`'s pools and single addresses; new or rebuilt pools and new addresses read
   * their CA files with `readPem`. Members created by this plan get the configured idle
   * timeout; existing ones keep theirs. A new `members_from: api` pool named in `seeds`
   * starts with that list instead of the file's (the recorded list after a restart).
   */
  plan(config: Config, { readPem, seeds, external = new Map() }: PlanOptions): PoolPlan {
    const idleTimeout = config.server.upstream_client.idle_timeout;
    const next = new Map<string, Pool>();
    const pending: PendingMembers[] = [];
    const created: Pool[] = [];
    const retired: Pool[] = [];
    try {
      for (const [name, cfg] of Object.entries(config.upstreams)) {
        const old = this.pools.get(name);
        if (old !== undefined && old.key === settingsKey(cfg)) {
          next.set(name, old);
          if (cfg.members_from === "file") {
            const set = old.plan(cfg.members, idleTimeout);
            pending.push({ pool: old, set, list: cfg.members });
          }
          continue;
        }
        // An api or dns pool keeps the members it has at run time, also when it was a file
        // pool; a dns pool's next answer replaces them.
        const seed = cfg.members_from === "file"
          ? cfg.members
          : old !== undefined
          ? old.memberConfigs()
          : seeds?.get(name) ?? cfg.members;
        const pool = new Pool({
          settings: { ...cfg, members: seed },
          deps: this.deps,
          readPem,
          idleTimeout,
        });
        // The console's charts go on across a rebuild of the same pool.
        if (old !== undefined) pool.history = old.history;
        next.set(name, pool);
        created.push(pool);
        if (old !== undefined) retired.push(old);
      }
    } catch (err) {
      for (const p of created) p.retire();
      throw err;
    }
    // Pools of supervised applications: listed with the others, owned by their supervisor.
    for (const [name, p] of external) next.set(name, p);
    for (const [name, old] of this.pools) if (!next.has(name) && !old.external) retired.push(old);
    let addresses;
    try {
      addresses = planAddressConns({ config, live: this.addresses, readPem });
    } catch (err) {
      for (const p of created) p.retire();
      throw err;
    }
    return { pools: next, pending, created, retired, addresses, idleTimeout };
  }

  /**
   * Checks the members that `plan` keeps for a rebuilt api pool against its new
   * settings (a kept `unix:` member cannot take `scheme: https`): one `upstreams.NAME: ...`
   * problem per pool whose kept list does not fit, so the reload is refused naming it.
   */
  keptMemberProblems(config: Config): string[] {
    const problems: string[] = [];
    for (const [name, cfg] of Object.entries(config.upstreams)) {
      if (cfg.members_from !== "api") continue;
      const old = this.pools.get(name);
      if (old === undefined || old.key === settingsKey(cfg)) continue;
      const errors = poolMemberErrors(old.memberConfigs(), cfg.scheme, "", cfg.protocol);
      if (errors.length === 0) continue;
      problems.push(
        `upstreams.${name}: the members it keeps from the admin API do not fit its new ` +
          `settings: ${errors.join("; ")}; PUT a list that fits, then reload`,
      );
    }
    return problems;
  }

  /** Makes a plan live; call right after the generation that uses `plan.pools` was swapped in. */
  commit(plan: PoolPlan): void {
    for (const p of plan.retired) p.retire();
    for (const { pool, set, list } of plan.pending) pool.install(set, list);
    for (const p of plan.created) p.activate();
    // Members added later (a run-time PUT) get the idle timeout now in force.
    for (const p of plan.pools.values()) p.idleTimeout = plan.idleTimeout;
    this.pools = plan.pools;
    const metrics = this.deps.metrics;
    const fcgiLabels = new Set<string>();
    for (const c of plan.addresses.values()) {
      if (!(c instanceof FcgiConns)) continue;
      c.attach(metrics, c.address);
      fcgiLabels.add(c.address);
    }
    for (const [k, c] of this.addresses) {
      if (plan.addresses.has(k)) continue;
      c.close();
      if (c instanceof FcgiConns && !fcgiLabels.has(c.address)) dropFcgiSeries(metrics, c.address);
    }
    this.addresses = plan.addresses;
  }

  /** Throws a plan away: pools it created never served and leave no series. */
  discard(plan: PoolPlan): void {
    for (const p of plan.created) p.retire();
  }

  /** Takes one sample of every pool's member rates and p99 (the console's charts). */
  sampleHistory(now: number): void {
    for (const p of this.pools.values()) p.history.sample(now, p.set.members);
  }

  /** Refreshes time-dependent gauges before a scrape. */
  collect(now: number): void {
    for (const p of this.pools.values()) p.collect(now);
  }

  closeAll(): void {
    for (const p of this.pools.values()) if (!p.external) p.retire();
    for (const c of this.addresses.values()) c.close();
  }
}
