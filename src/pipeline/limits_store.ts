/**
 * `server.limits_store`: `limit_req` decisions taken in Redis, so that every instance under the
 * controller and every host with the same Redis counts one budget. Each decision is one atomic
 * Lua script (GCRA: the key holds the theoretical arrival time of the next request, in Redis's
 * own clock) and one pipelined round trip; keys expire once the bucket would be full again.
 * When Redis does not answer within `timeout`, or cannot be reached, `on_error` decides:
 * `allow`, count `local`ly in the process, or `deny`. Not the local limiter: see
 * `rate_limit.ts`.
 */
import type { LimitReqConfig, LimitsStoreConfig } from "../config/mod.ts";
import { log, type Metrics } from "../observe/mod.ts";
import {
  RedisCallError,
  type RedisFailure,
  RedisPool,
  type RedisPoolState,
  RespError,
  type RespValue,
} from "../redis/mod.ts";

/**
 * GCRA in one step. KEYS[1]: the client's key. ARGV[1]: the emission interval T (µs per
 * request), ARGV[2]: the tolerance, T * burst (µs). Returns 0 (allowed) or the microseconds
 * until a request would be. The time is Redis's (`TIME`), so hosts' clocks need not agree.
 */
export const GCRA_SCRIPT = `
local t = tonumber(ARGV[1])
local tau = tonumber(ARGV[2])
local now = redis.call('TIME')
local us = tonumber(now[1]) * 1000000 + tonumber(now[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or us)
if tat < us then tat = us end
local next = tat + t
if next - us > tau + t then
  return next - (tau + t) - us
end
redis.call('SET', KEYS[1], next, 'PX', math.ceil((next - us) / 1000) + 1)
return 0
`.trim();

/** SHA-1 of `GCRA_SCRIPT`, as `EVALSHA` names it (computed once at first use). */
let scriptSha: Promise<string> | undefined;
function sha(): Promise<string> {
  scriptSha ??= crypto.subtle.digest("SHA-1", new TextEncoder().encode(GCRA_SCRIPT)).then((d) =>
    [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("")
  );
  return scriptSha;
}

/** What the admin API shows of the store. */
export interface LimitsStoreState extends RedisPoolState {
  readonly address: string;
  readonly on_error: LimitsStoreConfig["on_error"];
  readonly decisions: number;
  readonly errors: number;
}

/** Milliseconds until a request is allowed (0: now), or the failure that left it undecided. */
export type Decision = number | RedisFailure | "script";

/** One shared store per process; its connections outlive generations with the same address. */
export class LimitsStore {
  readonly config: LimitsStoreConfig;
  readonly #pool: RedisPool;
  readonly #metrics: Metrics | undefined;
  #sha = "";
  #decisions = 0;
  #errors = 0;
  #lastLog = -Infinity;

  constructor(config: LimitsStoreConfig, metrics?: Metrics) {
    this.config = config;
    this.#metrics = metrics;
    this.#pool = new RedisPool({ address: config.redis.address, timeout: config.redis.timeout });
    void sha().then((s) => (this.#sha = s));
  }

  /** True when calls would fail at once (a failed connect's backoff): decide locally now. */
  get down(): boolean {
    return this.#pool.down;
  }

  state(): LimitsStoreState {
    return {
      address: this.config.redis.address.canonical,
      on_error: this.config.on_error,
      decisions: this.#decisions,
      errors: this.#errors,
      ...this.#pool.state(),
    };
  }

  /**
   * The key of one client of one limit: `PREFIX` + scope + the limit's definition + client, so
   * a limit whose rate changes starts afresh rather than inheriting another's budget.
   */
  key(scope: string, def: LimitReqConfig, client: string): string {
    return `${this.config.redis.key_prefix}${scope}:${def.rate}:${def.burst}:${client}`;
  }

  /** One decision: milliseconds to wait (0: allowed), or why there is none. */
  async decide(key: string, def: LimitReqConfig): Promise<Decision> {
    const started = performance.now();
    const t = Math.max(1, Math.round(1_000_000 / def.rate));
    const args = [String(t), String(t * def.burst)];
    this.#decisions++;
    let outcome: Decision;
    try {
      let reply: RespValue;
      if (this.#sha !== "") {
        reply = await this.#pool.call(["EVALSHA", this.#sha, "1", key, ...args]);
        // Redis restarted or flushed its scripts: send the script itself (which loads it),
        // within what is left of the one timeout.
        if (reply instanceof RespError && reply.code === "NOSCRIPT") {
          const deadline = started + this.config.redis.timeout;
          reply = await this.#pool.call(["EVAL", GCRA_SCRIPT, "1", key, ...args], deadline);
        }
      } else reply = await this.#pool.call(["EVAL", GCRA_SCRIPT, "1", key, ...args]);
      if (typeof reply === "number" && reply >= 0) outcome = Math.ceil(reply / 1000);
      else {
        outcome = "script";
        this.#fail("script", reply instanceof RespError ? reply.message : JSON.stringify(reply));
      }
    } catch (err) {
      const reason = err instanceof RedisCallError ? err.reason : "closed";
      outcome = reason;
      this.#fail(reason, err instanceof Error ? err.message : String(err));
    }
    this.#metrics?.limitsStoreLatency.with().observe((performance.now() - started) / 1000);
    return outcome;
  }

  /** Counts a failure; logs at most one line a minute. */
  #fail(reason: string, message: string): void {
    this.#errors++;
    this.#metrics?.limitsStoreErrors.with(reason).inc();
    const now = performance.now();
    if (now - this.#lastLog < 60_000) return;
    this.#lastLog = now;
    log("warn", "limits_store_error", {
      address: this.config.redis.address.canonical,
      reason,
      message,
      on_error: this.config.on_error,
    });
  }

  /** A failure counted without asking Redis (the store is down): `on_error` applies. */
  countDown(): void {
    this.#decisions++;
    this.#fail("down", "redis is down");
  }

  close(): void {
    this.#pool.close();
  }
}
