/**
 * Keeps one `members_from: dns` pool following its name: resolve, hand a changed list to
 * `apply` (the pool installs it with its keep-what-stays rules), report errors, wait as
 * `DnsSchedule` says, again until stopped.
 */
import type { Clock } from "../base/mod.ts";
import type { DnsConfig, MemberConfig } from "../config/mod.ts";
import { log } from "../observe/mod.ts";
import { DnsQueryError, type NameServer, queryDns, type QueryOptions } from "./dns_client.ts";
import { DNS_TYPE, DnsFormatError, type DnsResponse, normaliseName, RCODE } from "./dns_message.ts";
import { membersFromAnswer } from "./dns_members.ts";
import { type DnsOutcome, DnsSchedule } from "./dns_schedule.ts";

/** What a watch needs. */
export interface DnsWatchInit {
  readonly pool: string;
  readonly dns: DnsConfig;
  readonly server: NameServer;
  readonly clock: Clock;
  /** The list the pool has now (a reload keeps it). */
  readonly current: readonly MemberConfig[];
  /** Installs a new list in the pool. */
  apply(members: readonly MemberConfig[]): Promise<void>;
  /** Called after each installed list. */
  onUpdate?(members: readonly MemberConfig[]): void;
  /** Called with each failed resolution. */
  onError?(message: string): void;
  /** Replaces the resolver (tests). */
  readonly query?: (o: QueryOptions) => Promise<DnsResponse>;
}

/** One pool's resolution loop. */
export class DnsWatch {
  private readonly schedule: DnsSchedule;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private readonly name: string;

  constructor(private readonly init: DnsWatchInit) {
    this.schedule = new DnsSchedule(init.dns, init.current);
    this.name = normaliseName(init.dns.name);
  }

  /** Resolves once now; the returned promise settles when that first round is done. */
  start(): Promise<void> {
    return this.round();
  }

  /** Stops the loop; a resolution in flight is ignored when it ends. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
  }

  private async resolve(): Promise<DnsOutcome> {
    const { dns, server } = this.init;
    const query = this.init.query ?? queryDns;
    let r: DnsResponse;
    try {
      r = await query({ server, name: this.name, type: DNS_TYPE[dns.type] });
    } catch (err) {
      if (err instanceof DnsQueryError || err instanceof DnsFormatError) {
        return { kind: "error", message: `${dns.name}: ${err.message}` };
      }
      return { kind: "error", message: `${dns.name}: ${(err as Error).message ?? err}` };
    }
    if (r.rcode === RCODE.NXDOMAIN) return { kind: "nxdomain" };
    if (r.rcode !== RCODE.NOERROR) {
      const code = Object.entries(RCODE).find(([, v]) => v === r.rcode)?.[0] ?? `rcode ${r.rcode}`;
      return { kind: "error", message: `${dns.name}: name server answered ${code}` };
    }
    return { kind: "answer", ...membersFromAnswer(r, dns, this.name) };
  }

  private async round(): Promise<void> {
    if (this.stopped) return;
    const outcome = await this.resolve();
    if (this.stopped) return;
    const step = this.schedule.next(outcome, this.init.clock.now());
    const { pool } = this.init;
    if (step.apply !== undefined) {
      try {
        await this.init.apply(step.apply);
        this.init.onUpdate?.(step.apply);
        log("info", "dns_members_updated", {
          pool,
          name: this.init.dns.name,
          members: step.apply.map((m) => m.address),
        });
      } catch (err) {
        log("error", "dns_members_not_installed", { pool, error: String(err) });
      }
    }
    if (step.error !== undefined) {
      this.init.onError?.(step.error);
      log("warn", "dns_resolution_failed", {
        pool,
        error: step.error,
        retry_ms: step.delay,
        ...(step.apply !== undefined ? { emptied: true } : {}),
      });
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.round();
    }, step.delay);
  }
}
