/**
 * The process's response cache: the one store, the miss collapser and the clock, shared by
 * every generation; and the per-application result counters.
 */
import type { Clock } from "../base/clock.ts";
import type { Family, Series } from "../observe/metrics.ts";
import { COLLAPSE_WAIT, Collapser } from "./collapse.ts";
import { Store } from "./store.ts";

/** `result` label values of `scalws_cache_requests_total`, in index order. */
export const RESULTS = ["hit", "miss", "stale", "revalidated", "bypass", "collapsed"] as const;
export type Result = (typeof RESULTS)[number];
export const HIT = 0;
export const MISS = 1;
export const STALE = 2;
export const REVALIDATED = 3;
export const BYPASS = 4;
export const COLLAPSED = 5;

export class Cache {
  readonly store: Store;
  readonly collapser = new Collapser();
  /** Longest wait of a collapsed miss for the leader's answer, ms. */
  collapseWait = COLLAPSE_WAIT;

  constructor(maxBytes: number, readonly clock: Clock) {
    this.store = new Store(maxBytes);
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
