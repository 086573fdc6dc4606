/**
 * `limit_req` per client address: counted in the process (a token bucket per address), or, with
 * `server.limits_store`, in Redis for every instance and host (`limits_store.ts`), the process's
 * buckets then answering only when Redis cannot (`on_error: local`).
 */
import type { LimitReqConfig } from "../config/mod.ts";
import type { Clock } from "../base/mod.ts";
import type { Decision, LimitsStore } from "./limits_store.ts";
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

  /** With a shared store: the keys' common start (`PREFIX` + scope + definition). */
  private readonly keyBase: string;

  constructor(
    readonly definition: LimitReqConfig,
    private readonly clock: Clock,
    /** Default 100,000 client addresses. */
    readonly maxClients = 100_000,
    /** Where decisions are taken when set (Redis); the buckets here are its local fallback. */
    readonly store?: LimitsStore,
    scope = "server",
  ) {
    this.capacity = definition.burst + 1;
    this.perMs = definition.rate / 1000;
    this.keyBase = store === undefined ? "" : store.key(scope, definition, "");
  }

  /**
   * 0 when `client` may send a request now, else whole seconds to wait (at least 1); with a
   * shared store, a promise of that, settled within the store's timeout.
   */
  decide(client: string): number | Promise<number> {
    const store = this.store;
    if (store === undefined) return this.take(client);
    if (store.down) {
      store.countDown();
      return this.fallback(client);
    }
    return store.decide(this.keyBase + client, this.definition).then((d) =>
      this.#seconds(d, client)
    );
  }

  #seconds(d: Decision, client: string): number {
    if (typeof d !== "number") return this.fallback(client);
    return d === 0 ? 0 : Math.max(1, Math.ceil(d / 1000));
  }

  /** What `on_error` says when the store gave no decision. */
  private fallback(client: string): number {
    switch (this.store!.config.on_error) {
      case "allow":
        return 0;
      case "deny":
        return 1;
      case "local":
        return this.take(client);
    }
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

  /** Takes over another limiter's buckets (same definition, another store). */
  adopt(other: RateLimiter): void {
    for (const [k, b] of other.buckets) this.buckets.set(k, b);
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

  /**
   * The limiter for `scope` (`server`, `tenant/app`) with this definition; with `store`, one
   * that decides in the shared store (and keeps its own buckets for `on_error: local`).
   */
  get(scope: string, def: LimitReqConfig, store?: LimitsStore): RateLimiter {
    for (const [k, ref] of this.byKey) {
      if (ref.deref() === undefined) this.byKey.delete(k);
    }
    const key = `${scope} ${def.rate} ${def.burst}`;
    const live = this.byKey.get(key)?.deref();
    if (live !== undefined && live.store === store) return live;
    // A new store: the local buckets go on (they are the same clients' budgets).
    const made = new RateLimiter(def, this.clock, undefined, store, scope);
    if (live !== undefined) made.adopt(live);
    this.byKey.set(key, new WeakRef(made));
    return made;
  }
}
