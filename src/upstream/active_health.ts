/**
 * Active health checks (`health_check:` on a pool): one jittered timer per pool (`Prober`), never
 * on the request path, at most 16 probes at once; the default probe is an HTTP/1.1 GET of `path`
 * (any status below 500 is alive) or, without it, a connect. Results go to each member's active
 * health state.
 *
 * @module
 */

import type { HealthCheckConfig } from "../config/mod.ts";
import { log } from "../observe/mod.ts";
import { ActiveHealthState } from "./active_health_state.ts";
import type { Member } from "./member.ts";
import type { Clock, Random } from "../base/mod.ts";

/** At most this many probes of one pool run at the same time. */
export const PROBE_CONCURRENCY = 16;

/** How one probe reaches a member: resolves true when it is alive. Injected by tests. */
export type Probe = (member: Member, cfg: HealthCheckConfig) => Promise<boolean>;

const enc = new TextEncoder();

/**
 * The default probe: with `path`, an HTTP/1.1 GET on a fresh connection where any status below
 * 500 is alive; without it, a TCP (or TLS) connect.
 */
export async function defaultProbe(member: Member, cfg: HealthCheckConfig): Promise<boolean> {
  let conn;
  try {
    conn = await member.conns.connector.connect(cfg.timeout);
  } catch {
    return false;
  }
  try {
    if (cfg.path === undefined) return true;
    const head =
      `GET ${cfg.path} HTTP/1.1\r\nHost: ${member.authority}\r\nUser-Agent: scalwsd-health-check\r\n` +
      `Connection: close\r\n\r\n`;
    await conn.write(enc.encode(head));
    const buf = new Uint8Array(64);
    let got = 0;
    const read = (async () => {
      while (got < 12) {
        const n = await conn.read(buf.subarray(got));
        if (n === null) break;
        got += n;
      }
      return "read" as const;
    })().catch(() => "read" as const);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<"timeout">((resolve) =>
      timer = setTimeout(() => resolve("timeout"), cfg.timeout)
    );
    const winner = await Promise.race([read, timedOut]);
    clearTimeout(timer);
    if (winner === "timeout") return false;
    const line = new TextDecoder().decode(buf.subarray(0, got));
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(line);
    return m !== null && Number(m[1]) < 500;
  } catch {
    return false;
  } finally {
    try {
      conn.close();
    } catch { /* already closed */ }
  }
}

/**
 * Active health checks of one pool: one timer per pool (not per route), jittered, never on the
 * request path, at most `PROBE_CONCURRENCY` probes at once. Results go to each member's
 * `ActiveHealthState`; `onFlip` is told when a member goes down or comes back.
 */
export class Prober {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running = false;
  private stopped = false;

  constructor(
    readonly pool: string,
    readonly cfg: HealthCheckConfig,
    private readonly members: () => readonly Member[],
    private readonly onFlip: (m: Member) => void,
    private readonly clock: Clock,
    private readonly random: Random = Math.random,
    private readonly probe: Probe = defaultProbe,
  ) {}

  /** Gives every member a state (up until probes say otherwise) and starts the timer. */
  start(): void {
    this.stopped = false;
    this.schedule(this.cfg.interval * this.random());
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.tick(), Math.max(1, delay));
    Deno.unrefTimer(this.timer as unknown as number);
  }

  private async tick(): Promise<void> {
    await this.runOnce();
    // Jitter of +-10 % keeps many pools from probing in lockstep.
    this.schedule(this.cfg.interval * (0.9 + 0.2 * this.random()));
  }

  /** Probes every member once (tests call this directly). */
  async runOnce(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const list = this.members();
      let next = 0;
      const worker = async () => {
        while (next < list.length && !this.stopped) {
          const m = list[next++];
          const ok = await this.probe(m, this.cfg).catch(() => false);
          this.record(m, ok);
        }
      };
      const workers = [];
      for (let i = 0; i < Math.min(PROBE_CONCURRENCY, list.length); i++) workers.push(worker());
      await Promise.all(workers);
    } finally {
      this.running = false;
    }
  }

  /** Counts one result (a probe's, or a live request's connect failure). */
  record(m: Member, ok: boolean): void {
    if (m.removed) return;
    m.active ??= new ActiveHealthState();
    if (m.active.record(ok, this.clock.now(), this.cfg.rise, this.cfg.fall)) {
      log(m.active.up ? "info" : "warn", m.active.up ? "member_up" : "member_down", {
        pool: this.pool,
        member: m.address,
        source: "active_health",
      });
      this.onFlip(m);
    }
  }
}
