/**
 * Where each pool's members come from, and the loops that keep `members_from: dns` pools
 * following their names across reloads. Also what `scalwsd ctl upstreams` shows per pool:
 * the source, when the list last changed, and the last discovery error.
 */
import type { Clock, Lock } from "../base/mod.ts";
import type { Config, MemberConfig, PoolConfig } from "../config/mod.ts";
import { DnsWatch, type NameServer, systemNameServer } from "../discovery/mod.ts";
import type { Metrics } from "../observe/mod.ts";
import type { Pool } from "../upstream/mod.ts";

/** `file`, `api`, `dns`, or `kubernetes` (an api pool the ingress controller sets). */
export type MemberSource = "file" | "api" | "dns" | "kubernetes";

/** One pool's discovery state, as the admin API shows it. */
export interface SourceStatus {
  source: MemberSource;
  /** When the member list last changed (ms), if it did since the start. */
  updated?: number;
  lastError?: string;
  lastErrorAt?: number;
}

interface Running {
  readonly key: string;
  readonly pool: Pool;
  readonly watch: DnsWatch;
}

/** What `MemberSources` needs of the server. */
export interface MemberSourcesInit {
  readonly clock: Clock;
  readonly lock: Lock;
  readonly metrics: Metrics;
  /** The live pools by name. */
  readonly pools: () => ReadonlyMap<string, Pool>;
}

/** Discovery state of every pool, and the DNS loops. */
export class MemberSources {
  private readonly status = new Map<string, SourceStatus>();
  private readonly watches = new Map<string, Running>();
  private systemServer: NameServer | undefined;

  constructor(private readonly init: MemberSourcesInit) {}

  /** The status of pool `name`, if the configuration has it. */
  get(name: string): Readonly<SourceStatus> | undefined {
    return this.status.get(name);
  }

  /**
   * Records a list given to `pool` (a PUT, a DNS answer): its source, and when it `changed`
   * (default), the time and the update counter. A PUT of the list the pool has changes neither.
   */
  noteUpdate(pool: string, source?: MemberSource, changed = true): void {
    const s = this.status.get(pool);
    if (s === undefined) return;
    if (source !== undefined) s.source = source;
    if (!changed) return;
    s.updated = this.init.clock.now();
    this.init.metrics.discoveryUpdates.with(pool).value++;
  }

  /** Records the time of a list read back from `server.state_dir` at start. */
  noteLoaded(pool: string, updated: number): void {
    const s = this.status.get(pool);
    if (s !== undefined) s.updated = updated;
  }

  /** Records a failed discovery round of `pool`. */
  noteError(pool: string, message: string): void {
    const s = this.status.get(pool);
    if (s === undefined) return;
    s.lastError = message;
    s.lastErrorAt = this.init.clock.now();
    this.init.metrics.discoveryErrors.with(pool).value++;
  }

  /**
   * Brings the DNS loops and statuses in line with `config` after its pools went live: a loop
   * whose pool object, DNS settings and resolver are unchanged keeps running; others start
   * anew (or stop). Resolves when each new loop finished its first round; a caller that holds
   * the server lock must not wait for that (the rounds take the lock to install).
   */
  sync(config: Config): Promise<void> {
    const pools = this.init.pools();
    const firsts: Promise<void>[] = [];
    for (const name of this.status.keys()) {
      if (config.upstreams[name] === undefined) {
        this.status.delete(name);
        this.init.metrics.discoveryUpdates.remove(name);
        this.init.metrics.discoveryErrors.remove(name);
      }
    }
    const now = this.init.clock.now();
    for (const [name, cfg] of Object.entries(config.upstreams)) {
      const s = this.status.get(name);
      const source: MemberSource = cfg.members_from;
      // A file pool's list is (re)installed by every load of the configuration.
      if (s === undefined) {
        this.status.set(name, source === "file" ? { source, updated: now } : { source });
      } else if (!(s.source === "kubernetes" && source === "api")) {
        // An api pool keeps `kubernetes` once the ingress controller set it.
        s.source = source;
        if (source === "file") s.updated = now;
      }
    }
    for (const [name, run] of this.watches) {
      const cfg = config.upstreams[name];
      if (
        cfg?.dns === undefined || run.pool !== pools.get(name) || run.key !== this.key(cfg, config)
      ) {
        run.watch.stop();
        this.watches.delete(name);
      }
    }
    for (const [name, cfg] of Object.entries(config.upstreams)) {
      if (cfg.dns === undefined || this.watches.has(name)) continue;
      const pool = pools.get(name);
      if (pool === undefined) continue;
      const watch = new DnsWatch({
        pool: name,
        dns: cfg.dns,
        server: this.server(config),
        clock: this.init.clock,
        current: pool.memberConfigs(),
        apply: (members) => this.install(name, pool, members),
        onUpdate: () => this.noteUpdate(name),
        onError: (message) => this.noteError(name, message),
      });
      this.watches.set(name, { key: this.key(cfg, config), pool, watch });
      firsts.push(watch.start());
    }
    return Promise.all(firsts).then(() => {});
  }

  /** Stops every DNS loop (drain). */
  stop(): void {
    for (const run of this.watches.values()) run.watch.stop();
    this.watches.clear();
  }

  private install(name: string, pool: Pool, members: readonly MemberConfig[]): Promise<void> {
    return this.init.lock.run(() => {
      // A reload may have replaced the pool meanwhile; its own loop takes over.
      if (this.init.pools().get(name) !== pool) return;
      pool.install(pool.plan(members), members);
    });
  }

  private server(config: Config): NameServer {
    const r = config.server.resolver;
    if (r !== undefined) return { hostname: r.hostname, port: r.port };
    return this.systemServer ??= systemNameServer();
  }

  private key(cfg: PoolConfig, config: Config): string {
    return JSON.stringify([cfg.dns, config.server.resolver?.address ?? null]);
  }
}
