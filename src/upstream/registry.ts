import type { Config, MemberConfig } from "../config/types.ts";
import type { PemReader } from "./member_tls.ts";
import { type PlannedSet, Pool, type PoolDeps, settingsKey } from "./pool.ts";

/** A kept pool's member change, installed after the generation swap. */
interface PendingMembers {
  readonly pool: Pool;
  readonly set: PlannedSet;
  readonly list: readonly MemberConfig[];
}

/** What a reload will do to the pools; built without touching live state. */
export interface PoolPlan {
  readonly pools: ReadonlyMap<string, Pool>;
  readonly pending: readonly PendingMembers[];
  readonly created: readonly Pool[];
  readonly retired: readonly Pool[];
}

/**
 * Pools by name across generations. Planning builds new pools beside the live ones; `commit`
 * (after the generation swap) installs member lists, gives new pools their series and retires
 * removed or rebuilt ones. A refused reload calls `discard`, which leaves no trace.
 */
export class PoolRegistry {
  pools: ReadonlyMap<string, Pool> = new Map();

  constructor(readonly deps: PoolDeps) {}

  /** Plans `config`'s pools; new or rebuilt pools read their CA files with `readPem`. */
  plan(config: Config, readPem: PemReader): PoolPlan {
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
            pending.push({ pool: old, set: old.plan(cfg.members), list: cfg.members });
          }
          continue;
        }
        // An api pool keeps the members it has at run time, also when it was a file pool.
        const seed = old !== undefined && cfg.members_from === "api"
          ? old.memberConfigs()
          : cfg.members;
        const pool = new Pool({ ...cfg, members: seed }, this.deps, readPem);
        next.set(name, pool);
        created.push(pool);
        if (old !== undefined) retired.push(old);
      }
    } catch (err) {
      for (const p of created) p.retire();
      throw err;
    }
    for (const [name, old] of this.pools) if (!next.has(name)) retired.push(old);
    return { pools: next, pending, created, retired };
  }

  /** Makes a plan live; call right after the generation that uses `plan.pools` was swapped in. */
  commit(plan: PoolPlan): void {
    for (const p of plan.retired) p.retire();
    for (const { pool, set, list } of plan.pending) pool.install(set, list);
    for (const p of plan.created) p.activate();
    this.pools = plan.pools;
  }

  /** Throws a plan away: pools it created never served and leave no series. */
  discard(plan: PoolPlan): void {
    for (const p of plan.created) p.retire();
  }

  /** Refreshes time-dependent gauges before a scrape. */
  collect(now: number): void {
    for (const p of this.pools.values()) p.collect(now);
  }

  closeAll(): void {
    for (const p of this.pools.values()) p.retire();
  }
}
