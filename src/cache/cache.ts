/**
 * The process's response cache: the one store, the miss collapser and the clock, shared by
 * every generation; and the per-application result counters.
 */
import type { Clock } from "../base/mod.ts";
import type { Family, Series } from "../observe/mod.ts";
import { COLLAPSE_WAIT, Collapser } from "./collapse.ts";
import { DiskStore } from "./disk_store.ts";
import { type PurgeTarget, Store } from "./store.ts";

/** `result` label values of `scalws_cache_requests_total`, in index order. */
export const RESULTS = ["hit", "miss", "stale", "revalidated", "bypass", "collapsed"] as const;
export type Result = (typeof RESULTS)[number];
export const HIT = 0;
export const MISS = 1;
export const STALE = 2;
export const REVALIDATED = 3;
export const BYPASS = 4;
export const COLLAPSED = 5;

/** One application's line of the cache view (`GET /v1/cache`, the console). */
export interface AppCacheStats {
  readonly tenant: string;
  readonly app: string;
  readonly objects: number;
  readonly bytes: number;
  /** Requests by result since the start. */
  readonly requests: Readonly<Record<Result, number>>;
  /** Answers from the cache (hit, stale, revalidated, collapsed) over looked-up requests. */
  readonly hit_ratio: number;
}

export interface CacheStats {
  readonly objects: number;
  readonly bytes: number;
  readonly max_size: number;
  readonly evictions: number;
  readonly hit_ratio: number;
  readonly applications: readonly AppCacheStats[];
}

/** Served from the cache over requests that were looked up (bypasses left out); 0 when none. */
export function hitRatio(r: Readonly<Record<Result, number>>): number {
  const served = r.hit + r.stale + r.revalidated + r.collapsed;
  const looked = served + r.miss;
  return looked === 0 ? 0 : Math.round((served / looked) * 10_000) / 10_000;
}

function zero(): Record<Result, number> {
  return { hit: 0, miss: 0, stale: 0, revalidated: 0, bypass: 0, collapsed: 0 };
}

export class Cache {
  readonly store: Store;
  readonly collapser = new Collapser();
  /** Longest wait of a collapsed miss for the leader's answer, ms. */
  collapseWait = COLLAPSE_WAIT;
  /** `server.cache.heuristic_max` in seconds (0: no heuristic freshness); default 1 day. */
  heuristicMax = 86_400;
  /** The disk tier (`server.cache.path`); null without one. */
  disk: DiskStore | null = null;
  /** Hit counters by tier, and the disk tier's store failures (a registry's, or private). */
  hitsMemory: Series = { value: 0 } as Series;
  hitsDisk: Series = { value: 0 } as Series;
  storeErrors: Series | undefined;

  /**
   * `requests`: the `scalws_cache_requests_total` family the per-application counters feed,
   * read back for `stats()`.
   */
  constructor(
    maxBytes: number,
    readonly clock: Clock,
    private readonly requests: Family<Series> | null = null,
  ) {
    this.store = new Store(maxBytes);
  }

  /**
   * Opens, keeps or closes the disk tier for `server.cache.path` (absent: none) and its budget.
   * A new path starts a new tier; entries under the old one stay on disk.
   */
  setDisk(path: string | undefined, maxBytes: number): void {
    if (path === undefined) {
      this.disk?.close();
      this.disk = null;
      return;
    }
    if (this.disk !== null && this.disk.root === path) {
      this.disk.maxBytes = maxBytes;
      return;
    }
    this.disk?.close();
    this.disk = new DiskStore({ root: path, maxBytes, storeErrors: this.storeErrors });
    this.disk.start();
  }

  /** Removes what `t` names from memory and disk; the larger of the two counts. */
  async purge(t: PurgeTarget): Promise<number> {
    const n = this.store.purge(t);
    const d = this.disk === null ? 0 : await this.disk.purge(t);
    return Math.max(n, d);
  }

  /** Objects, bytes and hit ratio, overall and per application. */
  stats(): CacheStats {
    const apps = new Map<string, { tenant: string; app: string; r: Record<Result, number> }>();
    const line = (tenant: string, app: string) => {
      const k = `${tenant}/${app}`;
      let a = apps.get(k);
      if (a === undefined) apps.set(k, a = { tenant, app, r: zero() });
      return a;
    };
    const total = zero();
    if (this.requests !== null) {
      for (const [key, series] of this.requests.series) {
        const [tenant, app, result] = key.split("\u0000");
        line(tenant, app).r[result as Result] += series.value;
        total[result as Result] += series.value;
      }
    }
    for (const owner of this.store.owners.keys()) {
      const slash = owner.indexOf("/");
      line(owner.slice(0, slash), owner.slice(slash + 1));
    }
    const store = this.store;
    return {
      objects: store.objects,
      bytes: store.bytes,
      max_size: store.maxBytes,
      evictions: store.evictions,
      hit_ratio: hitRatio(total),
      applications: [...apps.entries()].sort((a, b) => a[0] < b[0] ? -1 : 1).map(([k, a]) => {
        const u = store.owners.get(k);
        return {
          tenant: a.tenant,
          app: a.app,
          objects: u?.objects ?? 0,
          bytes: u?.bytes ?? 0,
          requests: a.r,
          hit_ratio: hitRatio(a.r),
        };
      }),
    };
  }
}

/** The cache result counters of one application, resolved on first use. */
export class CacheCounters {
  private readonly series: (Series | undefined)[] = new Array(RESULTS.length);
  constructor(
    readonly tenant: string,
    readonly app: string,
    private readonly family: Family<Series>,
  ) {}

  count(result: number): void {
    let s = this.series[result];
    if (s === undefined) {
      s = this.family.with(this.tenant, this.app, RESULTS[result]);
      this.series[result] = s;
    }
    s.value++;
  }
}
