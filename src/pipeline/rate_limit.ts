import type { LimitReqConfig } from "../config/types.ts";
import type { Clock } from "../base/clock.ts";
import { TokenBucket } from "./token_bucket.ts";

/** Buckets are swept of full ones once there are this many. */
const SWEEP_AT = 4096;

/**
 * `limit_req`: a token bucket per client address, `burst + 1` tokens refilled at `rate` per
 * second. Full buckets are forgotten (they change nothing); beyond `maxClients` the oldest
 * buckets go too.
 */
export class RateLimiter {
  readonly capacity: number;
  readonly perMs: number;
  private readonly buckets = new Map<string, TokenBucket>();
  private nextSweep = 0;

  constructor(
    readonly definition: LimitReqConfig,
    private readonly clock: Clock,
    /** Default 100,000 client addresses. */
    readonly maxClients = 100_000,
  ) {
    this.capacity = definition.burst + 1;
    this.perMs = definition.rate / 1000;
  }

  /** Client addresses tracked (for tests). */
  get size(): number {
    return this.buckets.size;
  }

  /** 0 when `client` may send a request now, else whole seconds to wait (at least 1). */
  take(client: string): number {
    const now = this.clock.now();
    let b = this.buckets.get(client);
    if (b === undefined) {
      if (this.buckets.size >= SWEEP_AT && now >= this.nextSweep) this.sweep(now);
      b = new TokenBucket(this.capacity, now);
      this.buckets.set(client, b);
    }
    const wait = b.take(now, this.capacity, this.perMs);
    return wait === 0 ? 0 : Math.max(1, Math.ceil(wait / 1000));
  }

  /** Forgets full buckets, then the oldest ones while over `maxClients`; at most once a second. */
  sweep(now: number): void {
    this.nextSweep = now + 1000;
    for (const [k, b] of this.buckets) {
      if (b.fullAt(now, this.capacity, this.perMs)) this.buckets.delete(k);
    }
    if (this.buckets.size < this.maxClients) return;
    let drop = this.buckets.size - this.maxClients + 1;
    for (const k of this.buckets.keys()) {
      if (drop-- <= 0) break;
      this.buckets.delete(k);
    }
  }
}

/**
 * Rate limiters that outlive generations: a reload whose limit has the same scope and
 * definition gets the same limiter, buckets included. Held weakly: a limiter no generation
 * uses any more is collected.
 */
export class LimiterRegistry {
  private readonly byKey = new Map<string, WeakRef<RateLimiter>>();

  constructor(private readonly clock: Clock) {}

  /** The limiter for `scope` (`server`, `tenant/app`) with this definition. */
  get(scope: string, def: LimitReqConfig): RateLimiter {
    for (const [k, ref] of this.byKey) {
      if (ref.deref() === undefined) this.byKey.delete(k);
    }
    const key = `${scope} ${def.rate} ${def.burst}`;
    const live = this.byKey.get(key)?.deref();
    if (live !== undefined) return live;
    const made = new RateLimiter(def, this.clock);
    this.byKey.set(key, new WeakRef(made));
    return made;
  }
}
