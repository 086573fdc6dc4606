/**
 * The workers of one supervised application and the pool they form: least_conn over the Ready
 * workers, with the pool rules of every pool (passive health, retries of idempotent requests).
 * A crashed worker leaves the pool at once and starts again after a backoff; one that crashes
 * too often is given up with an alert while the others serve. A changed runtime rolls the
 * workers one at a time: the new one is Ready and in the pool before the old one drains.
 */

import {
  type AppRuntime,
  type MemberConfig,
  parseMemberAddress,
  type PoolConfig,
} from "../config/mod.ts";
import { log } from "../observe/mod.ts";
import { type Member, Pool, type PoolDeps } from "../upstream/mod.ts";
import { RestartWindow } from "../base/mod.ts";
import { Worker, type WorkerOwner } from "./worker.ts";

/** How long a stopping worker has between SIGTERM and SIGKILL (ms). */
const STOP_GRACE = 5000;

/** What a group reports per worker (`GET /v1/apps`). */
export interface WorkerView {
  readonly id: number;
  readonly pid: number;
  readonly state: string;
  readonly address: string;
  readonly restarts: number;
  readonly in_flight: number;
  readonly cpu_seconds: number;
  readonly uptime_seconds: number;
}

/** A worker slot: the running worker (or none while it backs off or was given up). */
class Slot {
  worker: Worker | null = null;
  restarts = 0;
  failed = false;
  backoffUntil = 0;
  timer: ReturnType<typeof setTimeout> | undefined;
  constructor(readonly window: RestartWindow) {}
}

/** The synthesized pool settings of an application's workers. */
/** Pool settings the group owns and may change (`retries` follows the runtime on reload). */
type OwnSettings = { -readonly [K in keyof PoolConfig]: PoolConfig[K] };

function poolSettings(name: string, rt: AppRuntime, members: MemberConfig[]): OwnSettings {
  return {
    name,
    members,
    members_from: "file",
    balance: "least_conn",
    passive_health: { failures: 3, cooldown: 10_000 },
    retries: rt.retries,
    keepalive: 32,
    protocol: "http",
    scheme: "http",
  };
}

/** Counters a group feeds (the supervisor's metric families). */
export interface GroupMetrics {
  restarted(group: AppGroup): void;
}

export class AppGroup implements WorkerOwner {
  readonly pool: Pool;
  /** The pool's settings object: the pool reads `retries` from it at each request. */
  private readonly settings: OwnSettings;
  readonly dir: string;
  runtime: AppRuntime;
  key: string;
  private readonly slots: Slot[] = [];
  /** Old workers still finishing their requests in a roll or a shrink. */
  private readonly retiring = new Set<Worker>();
  private seq = 0;
  private stopped = false;
  private rolling: Promise<void> = Promise.resolve();
  restarts = 0;
  /** CPU seconds of workers that are gone (their last reading). */
  private exitedCpu = 0;

  constructor(
    readonly name: string,
    readonly tenant: string,
    readonly app: string,
    runtime: AppRuntime,
    deps: PoolDeps,
    private readonly metrics: GroupMetrics,
  ) {
    this.runtime = runtime;
    this.key = JSON.stringify(runtime);
    this.dir = Deno.makeTempDirSync({ prefix: "scalwsd-app-" });
    Deno.chmodSync(this.dir, 0o700);
    this.settings = poolSettings(name, runtime, []);
    this.pool = new Pool({
      settings: this.settings,
      deps,
      readPem: () => "",
      idleTimeout: 60_000,
    });
    this.pool.external = true;
  }

  /** Starts every worker; resolves when each is Ready, gave up, or ran out of `ready_timeout`. */
  start(): Promise<void> {
    const waits: Promise<unknown>[] = [];
    for (let i = 0; i < this.runtime.workers; i++) {
      const slot = new Slot(
        new RestartWindow(this.runtime.max_restarts, this.runtime.restart_window),
      );
      this.slots.push(slot);
      waits.push(this.launch(i));
    }
    return Promise.all(waits).then(() => {});
  }

  /** Starts slot `i`'s worker with the current runtime and puts it in the pool once Ready. */
  private async launch(i: number): Promise<boolean> {
    const slot = this.slots[i];
    if (this.stopped || slot === undefined) return false;
    const w = new Worker(this, this.runtime, i, this.seq++);
    slot.worker = w;
    try {
      w.spawn();
    } catch (err) {
      log("error", "app_worker_start_failed", { ...w.who(), error: String(err) });
      slot.worker = null;
      this.crashed(i, w);
      return false;
    }
    log("info", "app_worker_started", { ...w.who(), address: w.address });
    w.exited.then(() => this.exited(w));
    const ready = await w.waitReady(this.runtime.ready_timeout);
    if (slot.worker !== w) return false;
    if (!ready) {
      if (w.status === null) {
        log("error", "app_worker_not_ready", { ...w.who(), after_ms: this.runtime.ready_timeout });
        w.kill();
      }
      return false;
    }
    log("info", "app_worker_ready", { ...w.who(), ms: w.readyAt - w.startedAt });
    this.sync();
    return true;
  }

  /** A worker's process ended. A slot's current worker that was not asked to stop crashed. */
  private exited(w: Worker): void {
    this.exitedCpu += w.lastCpu;
    w.cleanup();
    const i = w.id;
    const slot = this.slots[i];
    if (slot === undefined || slot.worker !== w || this.stopped || this.retiring.has(w)) return;
    log("warn", "app_worker_exited", {
      ...w.who(),
      code: w.status?.code ?? null,
      signal: w.status?.signal ?? null,
    });
    slot.worker = null;
    this.sync();
    this.crashed(i, w);
  }

  /** Schedules the restart of slot `i`, or gives it up with an alert. */
  private crashed(i: number, w: Worker): void {
    const slot = this.slots[i];
    const delay = slot.window.crashed(Date.now());
    if (delay < 0) {
      slot.failed = true;
      log("error", "app_worker_given_up", {
        ...w.who(),
        alert: true,
        max_restarts: this.runtime.max_restarts,
        restart_window_ms: this.runtime.restart_window,
        serving: this.pool.set.members.length,
      });
      return;
    }
    slot.backoffUntil = Date.now() + delay;
    slot.timer = setTimeout(() => {
      slot.timer = undefined;
      if (this.stopped || slot.worker !== null || this.slots[i] !== slot) return;
      slot.restarts++;
      this.restarts++;
      this.metrics.restarted(this);
      this.launch(i);
    }, delay);
  }

  /** Installs the Ready workers (not draining) as the pool's members. */
  private sync(): void {
    const list: MemberConfig[] = [];
    for (const s of this.slots) {
      const w = s.worker;
      if (w === null || w.state !== "ready") continue;
      list.push({ address: w.address, parsed: parseMemberAddress(w.address), weight: 1 });
    }
    this.pool.install(this.pool.plan(list), list);
  }

  /**
   * A new runtime (changed `command`, `env`, `workers`, ...): rolls the workers one at a time,
   * each new one Ready and serving before the old one drains (`drain_timeout`) and stops.
   * Returns when the roll is done.
   */
  update(rt: AppRuntime): Promise<void> {
    this.runtime = rt;
    this.settings.retries = rt.retries;
    this.key = JSON.stringify(rt);
    this.rolling = this.rolling.then(() => this.roll(rt));
    return this.rolling;
  }

  private async roll(rt: AppRuntime): Promise<void> {
    if (this.stopped || this.runtime !== rt) return;
    log("info", "app_rolling", { tenant: this.tenant, app: this.app, workers: rt.workers });
    const n = Math.max(rt.workers, this.slots.length);
    for (let i = 0; i < n; i++) {
      if (this.stopped || this.runtime !== rt) return;
      let slot = this.slots[i];
      const old = slot?.worker ?? null;
      // Its member, kept before the new worker's sync takes it out of the pool.
      const oldMember = old !== null ? this.memberOf(old) : undefined;
      if (slot !== undefined && slot.timer !== undefined) {
        clearTimeout(slot.timer);
        slot.timer = undefined;
      }
      if (i < rt.workers) {
        if (slot === undefined) {
          slot = new Slot(new RestartWindow(rt.max_restarts, rt.restart_window));
          this.slots[i] = slot;
        } else {
          // The new runtime gets a fresh restart budget.
          slot.failed = false;
          (slot as { window: RestartWindow }).window = new RestartWindow(
            rt.max_restarts,
            rt.restart_window,
          );
        }
        if (old !== null) this.retiring.add(old);
        const ok = await this.launch(i);
        if (!ok) {
          log("error", "app_roll_stopped", {
            tenant: this.tenant,
            app: this.app,
            worker: i,
            reason: "the new worker did not become ready; the old one keeps serving",
          });
          if (old !== null && old.status === null) {
            this.retiring.delete(old);
            slot.worker = old;
            this.sync();
          }
          return;
        }
      } else if (slot !== undefined) {
        slot.worker = null;
        if (old !== null) this.retiring.add(old);
        this.sync();
      }
      if (old !== null) await this.drain(old, rt.drain_timeout, oldMember);
    }
    this.slots.length = Math.min(this.slots.length, rt.workers);
  }

  /** Takes `w` out of the pool, waits for its requests (at most `ms`), stops it. */
  private async drain(w: Worker, ms: number, member = this.memberOf(w)): Promise<void> {
    this.retiring.add(w);
    w.state = "draining";
    this.sync();
    const end = Date.now() + ms;
    while (member !== undefined && member.inflight > 0 && Date.now() < end && w.status === null) {
      await new Promise((r) => setTimeout(r, 20));
    }
    await w.stop(STOP_GRACE);
    this.retiring.delete(w);
  }

  private memberOf(w: Worker): Member | undefined {
    return this.pool.set.byAddress.get(w.address);
  }

  /** Stops every worker (drains first when `drainMs` > 0) and removes the private directory. */
  async stop(drainMs = 0): Promise<void> {
    this.stopped = true;
    const all: Worker[] = [...this.retiring];
    for (const s of this.slots) {
      if (s.timer !== undefined) clearTimeout(s.timer);
      if (s.worker !== null) all.push(s.worker);
    }
    const members = all.map((w) => this.memberOf(w));
    for (const w of all) if (w.state === "ready") w.state = "draining";
    this.pool.install(this.pool.plan([]), []);
    if (drainMs > 0) {
      const end = Date.now() + drainMs;
      while (members.some((m) => m !== undefined && m.inflight > 0) && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    await Promise.all(all.map((w) => w.stop(STOP_GRACE)));
    this.pool.retire();
    await Deno.remove(this.dir, { recursive: true }).catch(() => {});
    log("info", "app_stopped", { tenant: this.tenant, app: this.app });
  }

  /** Waits for a roll in progress. */
  settled(): Promise<void> {
    return this.rolling;
  }

  /** Worker counts by state: starting, ready, draining, backoff, failed. */
  counts(): Record<string, number> {
    const c: Record<string, number> = { starting: 0, ready: 0, draining: 0, backoff: 0, failed: 0 };
    for (const s of this.slots) {
      if (s.worker !== null) c[s.worker.state === "ready" ? "ready" : "starting"]++;
      else if (s.failed) c.failed++;
      else c.backoff++;
    }
    c.draining += this.retiring.size;
    return c;
  }

  /** Every worker for the admin API, the retiring ones included. */
  view(): WorkerView[] {
    const now = Date.now();
    const out: WorkerView[] = [];
    const one = (w: Worker, restarts: number) => {
      out.push({
        id: w.id,
        pid: w.pid,
        state: w.state,
        address: w.address,
        restarts,
        in_flight: this.memberOf(w)?.inflight ?? 0,
        cpu_seconds: w.cpuSeconds(),
        uptime_seconds: Math.round((now - w.startedAt) / 100) / 10,
      });
    };
    this.slots.forEach((s, i) => {
      if (s.worker !== null) one(s.worker, s.restarts);
      else {
        out.push({
          id: i,
          pid: 0,
          state: s.failed ? "failed" : "backoff",
          address: "",
          restarts: s.restarts,
          in_flight: 0,
          cpu_seconds: 0,
          uptime_seconds: 0,
        });
      }
    });
    for (const w of this.retiring) one(w, 0);
    return out;
  }

  /**
   * CPU seconds of every worker this application ever ran (a counter: the controller's rate of
   * the application's load).
   */
  cpuSeconds(): number {
    let sum = this.exitedCpu;
    for (const s of this.slots) if (s.worker !== null) sum += s.worker.cpuSeconds();
    for (const w of this.retiring) sum += w.cpuSeconds();
    return sum;
  }
}

/** CPUs of the host (the most an application's workers can use together). */
const HOST_CPUS = Math.max(1, navigator.hardwareConcurrency || 1);

/** CPUs the Ready workers may use: one each (one event loop or process), at most the host's. */
export function cpuAllotment(ready: number): number {
  return Math.min(ready, HOST_CPUS);
}
