/**
 * When to resolve a `members_from: dns` pool again, and what each outcome does to its list
 * (pure: the caller passes the time). HAProxy's resolvers and Kubernetes' clients behave
 * alike here:
 *
 * - An answer with members replaces the list when it differs (keep-what-stays is the pool's),
 *   and the next resolution follows `refresh`: the answer's smallest TTL (`ttl`) or a fixed
 *   interval, held within `min_refresh`..`max_refresh`.
 * - A failed resolution (timeout, SERVFAIL, REFUSED, a malformed answer) or an empty answer
 *   keeps the last good list; it is an error, retried after `min_refresh`, doubling with each
 *   failure in a row up to the normal interval.
 * - NXDOMAIN is an error too; once it has lasted `grace`, the pool is emptied (a name that is
 *   really gone should not keep sending traffic to old addresses for ever).
 */
import type { DnsConfig, MemberConfig } from "../config/mod.ts";

/** What one resolution gave. */
export type DnsOutcome =
  | { readonly kind: "answer"; readonly members: readonly MemberConfig[]; readonly ttl: number }
  | { readonly kind: "nxdomain" }
  | { readonly kind: "error"; readonly message: string };

/** What to do about it: install `apply` when set, report `error` when set, wait `delay` ms. */
export interface DnsStep {
  readonly apply?: readonly MemberConfig[];
  readonly error?: string;
  readonly delay: number;
}

function listKey(members: readonly MemberConfig[]): string {
  return members.map((m) => `${m.address}=${m.weight}`).join(",");
}

/** The schedule of one pool; `current` is the list the pool starts with. */
export class DnsSchedule {
  private failures = 0;
  private nxSince: number | undefined;
  private current: string;
  private interval: number;

  constructor(readonly dns: DnsConfig, current: readonly MemberConfig[] = []) {
    this.current = listKey(current);
    this.interval = this.bound(dns.refresh === "ttl" ? dns.max_refresh : dns.refresh);
  }

  private bound(ms: number): number {
    return Math.min(this.dns.max_refresh, Math.max(this.dns.min_refresh, ms));
  }

  private failed(error: string): DnsStep {
    this.failures++;
    const backoff = this.dns.min_refresh * 2 ** Math.min(this.failures - 1, 30);
    return { error, delay: Math.min(backoff, this.interval) };
  }

  /** The step for `outcome` at `now` (ms). */
  next(outcome: DnsOutcome, now: number): DnsStep {
    const name = this.dns.name;
    if (outcome.kind === "error") return this.failed(outcome.message);
    if (outcome.kind === "nxdomain") {
      this.nxSince ??= now;
      const left = this.nxSince + this.dns.grace - now;
      if (left > 0) {
        const step = this.failed(`NXDOMAIN for ${name}; the pool is emptied after grace`);
        return { ...step, delay: Math.min(step.delay, left) };
      }
      const step = this.failed(`NXDOMAIN for ${name} for longer than grace`);
      if (this.current === "") return step;
      this.current = "";
      return { ...step, apply: [] };
    }
    this.nxSince = undefined;
    if (outcome.members.length === 0) return this.failed(`empty answer for ${name}`);
    this.failures = 0;
    if (this.dns.refresh === "ttl") this.interval = this.bound(outcome.ttl * 1000);
    const key = listKey(outcome.members);
    if (key === this.current) return { delay: this.interval };
    this.current = key;
    return { apply: outcome.members, delay: this.interval };
  }
}
