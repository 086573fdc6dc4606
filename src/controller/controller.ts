/**
 * The controller: starts, activates, drains and restarts scalwsd instances on one host, rolls
 * configuration generations and scales on PressureScore. It never touches client traffic:
 * instances bind their own `reusePort` listeners, and keep serving if the controller stops.
 *
 * One loop (`tick`, every `probe_interval`): observe (process alive? `/readyz`), enforce
 * timeouts, take the reconciler's next step, restart failed slots whose backoff ended, and
 * every `evaluation_interval` scrape `/metrics` for the evaluator. Control operations
 * (reload, rollback, scale, autoscaling on/off) run one at a time.
 *
 * "Configuration generation" (`configGeneration`) is the controller's numbered copy of the
 * configuration (`<state_dir>/generations/<n>`); an instance is started on one and reports it
 * as the generation it serves.
 */
import { type Config, ConfigError, loadConfig } from "../config/mod.ts";
import { MemberSync } from "./member_sync.ts";
import { InstanceWatch } from "./instance_watch.ts";
import { log } from "../observe/mod.ts";
import { ensureDir, Lock } from "../base/mod.ts";
import type { ControllerConfig } from "./config.ts";
import { ControlError, reloadRefused } from "./control_error.ts";
import { Evaluator, type Evidence, pressureParams, readScrape } from "./evaluator.ts";
import { ConfigGenerationStore, type Preflight } from "./generations.ts";
import { RUNNING_STATES } from "./lifecycle.ts";
import { adminRequest, scrapeMetrics } from "./probe.ts";
import { readProc } from "./proc.ts";
import {
  ensureMigrateReq,
  MIGRATE_REQ_FIX,
  type MigrateReqDeps,
  type MigrateReqState,
} from "./migrate_req.ts";
import { planStep, type Step } from "./reconcile.ts";
import { RecordStore } from "./records.ts";
import { signal, Slots } from "./slots.ts";
import {
  claimStateDir,
  type ControllerState,
  ControllerStateFile,
  restoreState,
} from "./state_files.ts";
import { type ControllerStatus, statusView } from "./status_view.ts";
import { ControllerMetrics } from "./controller_metrics.ts";

/** How instances are started on this host. */
export interface ControllerDeps {
  /** The scalwsd command (`[scalwsd]`, or `[deno, run, ..., main.ts]` from source). */
  readonly command: readonly string[];
  /** Path of `taskset`, or null: CPU sets are then recorded but not enforced. */
  readonly taskset: string | null;
  /** Clock in ms since the epoch; default `Date.now`. */
  readonly now?: () => number;
  /** Reads and sets `net.ipv4.tcp_migrate_req`; default the real /proc file. */
  readonly migrateReq?: MigrateReqDeps;
  /** `scalwsd check`'s file checks, run on every new generation; default none. */
  readonly preflight?: Preflight;
  /** Bytes of RAM available (MemAvailable), or null if unknown; default the host's. */
  readonly freeRam?: () => number | null;
}

const PROBE_TIMEOUT = 1_000;

export class Controller {
  readonly records: RecordStore;
  readonly configGenerations: ConfigGenerationStore;
  private readonly slots: Slots;
  private readonly stateFile: ControllerStateFile;
  private readonly evaluator: Evaluator;
  private readonly metrics: ControllerMetrics;
  private readonly lock = new Lock();
  /** Member lists of api pools; changes and pushes to instances run one at a time. */
  private readonly members: MemberSync;
  private readonly watch: InstanceWatch;
  private readonly configs = new Map<number, Promise<Config>>();
  private readonly now: () => number;
  private state!: ControllerState;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running = false;
  private ticking: Promise<void> | null = null;
  private readonly started = Date.now();
  private stopping = false;
  private migrateReq: MigrateReqState = { value: null, previous: null, warning: null };

  constructor(readonly cfg: ControllerConfig, private readonly deps: ControllerDeps) {
    const now = deps.now ?? Date.now;
    this.now = now;
    this.records = new RecordStore(cfg.state_dir);
    this.configGenerations = new ConfigGenerationStore(cfg.state_dir, deps.preflight);
    this.stateFile = new ControllerStateFile(cfg.state_dir);
    this.evaluator = new Evaluator(cfg);
    this.metrics = new ControllerMetrics(() => ({
      desired: this.state.desired,
      configGeneration: this.state.configGeneration,
      autoscaling: this.state.autoscaling,
      states: [...this.slots].map((s) => s.rec.state),
      lastEvaluation: this.evaluator.last,
    }));
    this.members = new MemberSync({ stateDir: cfg.state_dir, now });
    this.slots = new Slots({
      cfg,
      command: deps.command,
      taskset: deps.taskset,
      now,
      records: this.records,
      configGenerations: this.configGenerations,
      rollout: {
        current: () => this.state.configGeneration,
        abort: (back) => {
          // Nothing to roll back to from here: the failed generation is not a rollback target.
          this.setState({ previousConfigGeneration: null, configGeneration: back })
            .catch((err) => log("error", "state_write_failed", { error: String(err) }));
        },
      },
    });
    this.watch = new InstanceWatch({
      cfg,
      slots: this.slots,
      members: this.members,
      now,
      stopping: () => this.stopping,
    });
  }

  /** Desired instance count. */
  get desired(): number {
    return this.state.desired;
  }

  /** The configuration generation new instances start on. */
  get configGeneration(): number {
    return this.state.configGeneration;
  }

  get autoscaling(): boolean {
    return this.state.autoscaling;
  }

  /**
   * Prepares the state directory, creates configuration generation 1 on a first start (throws
   * `ConfigError` if the configuration is invalid), re-adopts the instances of an earlier run,
   * then starts the loop.
   */
  async start(): Promise<void> {
    const dir = this.cfg.state_dir;
    await ensureDir(dir);
    await Deno.chmod(dir, 0o700);
    await claimStateDir({ stateDir: dir, pid: Deno.pid, readProc });
    for (const d of ["sockets", "logs"]) await ensureDir(`${dir}/${d}`);
    await this.records.init();
    await this.configGenerations.init();
    const saved = await this.stateFile.read();
    if (saved === null) {
      const text = await readConfigText(this.cfg.config);
      const g = await this.configGenerations.create(text, this.cfg.config);
      for (const w of g.warnings) {
        log("warn", "config_warning", { file: this.cfg.config, warning: w });
      }
      this.state = {
        desired: this.cfg.instances.initial,
        configGeneration: g.number,
        previousConfigGeneration: null,
        autoscaling: this.cfg.autoscaling,
      };
      log("info", "generation_created", { generation: g.number, source: this.cfg.config });
    } else {
      if (!(await this.configGenerations.exists(saved.configGeneration))) {
        throw new Error(
          `generation ${saved.configGeneration} named in controller.json is missing`,
        );
      }
      this.state = restoreState(saved, {
        ...this.cfg.instances,
        autoscaling: this.cfg.autoscaling,
      });
    }
    await this.stateFile.write(this.state);
    try {
      await this.members.load(await this.generationConfig(this.state.configGeneration));
    } catch (err) {
      log("error", "member_lists_unreadable", { error: String((err as Error)?.message ?? err) });
    }
    const adopted = await this.slots.adopt();
    this.migrateReq = await ensureMigrateReq(this.cfg.tcp_migrate_req, this.deps.migrateReq);
    if (this.migrateReq.previous !== null) {
      log("info", "tcp_migrate_req_enabled", {
        previous: this.migrateReq.previous,
        value: this.migrateReq.value,
      });
    } else if (this.migrateReq.warning !== null) {
      log("warn", "tcp_migrate_req_off", {
        value: this.migrateReq.value,
        consequence:
          "connections queued on a draining instance's listener are reset instead of moving to another instance",
        fix: MIGRATE_REQ_FIX,
      });
    }
    if (this.deps.taskset === null) {
      log("warn", "cpu_affinity_unavailable", {
        reason: "taskset not found: CPU sets are recorded, not enforced",
      });
    }
    // ADR-0035: without cgroup v2 delegation the controller says so, it does not pretend.
    log("warn", "cgroup_limits_unenforced", {
      reason:
        "cgroup v2 limits are not used: CPU, memory and pids limits per instance are unenforced",
    });
    log("info", "controller_started", {
      pid: Deno.pid,
      state_dir: dir,
      generation: this.state.configGeneration,
      desired: this.state.desired,
      autoscaling: this.state.autoscaling,
      adopted,
    });
    this.running = true;
    this.schedule(0);
  }

  /** Stops the loop and leaves every instance running (they are re-adopted on the next start). */
  async close(): Promise<void> {
    this.running = false;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.ticking;
    await this.slots.release();
    await this.stateFile.flush();
  }

  /** Drains every instance, waits until they are gone (or killed), then stops the loop. */
  async stopAll(): Promise<void> {
    this.stopping = true;
    for (const s of this.slots) {
      if (s.rec.wanted || RUNNING_STATES.has(s.rec.state)) {
        await this.slots.retire(s, "controller stop");
      }
    }
    const limit = this.now() + this.cfg.drain_timeout + this.cfg.kill_grace + 2_000;
    while (this.now() < limit && [...this.slots].some((s) => RUNNING_STATES.has(s.rec.state))) {
      await sleep(Math.min(100, this.cfg.probe_interval));
    }
    await this.close();
  }

  /**
   * SIGUSR1 to the controller (log rotation): passed on to every instance past `starting` (one
   * still starting may not have blocked the signal yet, and its default action ends it).
   */
  reopenLogs(): void {
    for (const s of this.slots) {
      if (s.rec.pid > 0 && RUNNING_STATES.has(s.rec.state) && s.rec.state !== "starting") {
        signal(s.rec.pid, "SIGUSR1");
      }
    }
  }

  /** Changes the saved state and writes it (chained: the file ends with the latest state). */
  private setState(change: Partial<ControllerState>): Promise<void> {
    this.state = { ...this.state, ...change };
    return this.stateFile.write(this.state);
  }

  // ---- the loop ----

  private schedule(delay: number): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.ticking = this.tick().catch((err) => {
        log("error", "controller_tick_failed", {
          error: String(err),
          stack: (err as Error)?.stack,
        });
      }).finally(() => {
        this.ticking = null;
        this.schedule(this.cfg.probe_interval);
      });
    }, delay);
  }

  /** One round of observe, enforce, act. */
  async tick(): Promise<void> {
    await this.watch.checkAdopted();
    await this.watch.probeAll();
    await this.watch.enforceTimeouts();
    if (!this.stopping) {
      await this.step();
      await this.restartDue();
    }
    if (this.evaluator.due(this.now())) await this.evaluate();
  }

  /** The configuration of generation `n` (validated when it was written), read once. */
  private generationConfig(n: number): Promise<Config> {
    let p = this.configs.get(n);
    if (p === undefined) {
      const dir = this.configGenerations.baseDir(n);
      p = loadConfig(this.configGenerations.path(n), dir === undefined ? {} : { dir })
        .then((l) => l.config);
      p.catch(() => this.configs.delete(n));
      this.configs.set(n, p);
    }
    return p;
  }

  /** The reconciler's next step. */
  private async step(): Promise<void> {
    const step = this.plan();
    if (step.kind === "start") {
      log("info", "scale_step", {
        action: "start",
        id: step.id,
        reason: step.reason,
        generation: this.state.configGeneration,
      });
      await this.slots.spawn(step.id);
    } else if (step.kind === "retire") {
      log("info", "scale_step", { action: "retire", id: step.id, reason: step.reason });
      await this.slots.retire(this.slots.get(step.id)!, step.reason);
    }
  }

  private plan(): Step {
    return planStep(this.slots.views(), {
      desired: this.state.desired,
      configGeneration: this.state.configGeneration,
      indexLimit: 2 * this.cfg.instances.max + 1,
      startHeld: this.startHeld(),
      min: this.cfg.instances.min,
    });
  }

  /**
   * Host limit `min_free_ram`: why no instance may be started beyond `instances.min` (a
   * scale-out, a rolling reload's extra instance) now, or null. A crashed instance is still
   * restarted (it restores capacity).
   */
  private startHeld(): string | null {
    const min = this.cfg.min_free_ram;
    if (min <= 0) return null;
    const free = (this.deps.freeRam ?? hostFreeRam)();
    if (free === null || free >= min) return null;
    return `free RAM ${mib(free)} MiB is below min_free_ram ${mib(min)} MiB`;
  }

  private async restartDue(): Promise<void> {
    const now = this.now();
    for (const s of this.slots) {
      if (s.rec.state !== "failed" || !s.rec.wanted || s.rec.gave_up) continue;
      if (s.restartAt === null || s.restartAt > now) continue;
      s.restartAt = null;
      log("info", "restarting", { id: s.rec.id, failures_in_window: s.rec.failures.length });
      await this.slots.spawn(s.rec.id);
    }
  }

  /** Scrapes every active instance, lets the evaluator decide, and applies a scaling action. */
  private async evaluate(): Promise<void> {
    const active = [...this.slots].filter((s) => s.rec.wanted && s.rec.state === "active");
    const params = pressureParams(this.cfg);
    const evidence: Evidence[] = [];
    await Promise.all(active.map(async (s) => {
      const token = s.token;
      const text = await scrapeMetrics(s.rec.metrics, PROBE_TIMEOUT);
      if (text === null || token !== s.token || s.rec.state !== "active") return;
      const r = readScrape({
        id: s.rec.id,
        cpusAssigned: s.rec.cpus.length,
        text,
        at: this.now(),
        previous: s.lastScrape,
      }, params);
      if (r === null) return;
      s.lastScrape = r.scrape;
      if (r.evidence !== null) evidence.push(r.evidence);
    }));
    const step = this.plan();
    const { decision: d, evaluation } = this.evaluator.evaluate({
      evidence,
      instances: active.length,
      desired: this.state.desired,
      enabled: this.state.autoscaling && !this.stopping,
      inFlight: step.kind === "idle"
        ? null
        : step.kind === "wait"
        ? step.reason
        : `${step.kind} ${step.id}`,
      startHeld: this.startHeld(),
      now: this.now(),
    });
    log("info", "evaluation", evaluation);
    this.metrics.evaluated(evaluation);
    if (d.action !== "None") {
      await this.setState({ desired: d.target });
      log("info", "autoscaled", {
        action: d.action,
        from: active.length,
        to: d.target,
        reason: d.reason,
      });
    }
  }

  // ---- control operations (serialised) ----

  /** Validates the configuration file, writes it as the next generation and rolls to it. */
  reload(): Promise<{ generation: number; previous: number; warnings: string[] }> {
    return this.lock.run(async () => {
      let g;
      try {
        g = await this.configGenerations.create(
          await readConfigText(this.cfg.config),
          this.cfg.config,
        );
      } catch (err) {
        if (err instanceof ConfigError) {
          log("error", "reload_refused", { file: this.cfg.config, errors: err.errors });
          throw reloadRefused(err);
        }
        throw err;
      }
      const previous = this.state.configGeneration;
      await this.setState({ configGeneration: g.number, previousConfigGeneration: previous });
      log("info", "reload", { generation: g.number, previous, warnings: g.warnings });
      return { generation: g.number, previous, warnings: g.warnings };
    });
  }

  /** Rolls back to the previous generation (the same rolling procedure). */
  rollback(): Promise<{ generation: number; previous: number }> {
    return this.lock.run(async () => {
      const target = this.state.previousConfigGeneration;
      if (
        target === null || target === this.state.configGeneration ||
        !(await this.configGenerations.exists(target))
      ) {
        throw new ControlError(409, "no previous generation to roll back to");
      }
      const previous = this.state.configGeneration;
      await this.setState({ configGeneration: target, previousConfigGeneration: previous });
      log("info", "rollback", { generation: target, previous });
      return { generation: target, previous };
    });
  }

  /**
   * Sets the desired instance count (`min`..`max`); starts the autoscaler's cooldown. Slots
   * given up after `max_restarts` are restarted (the operator's word to try again).
   */
  scale(n: number): Promise<{ desired: number; previous: number }> {
    return this.lock.run(async () => {
      const { min, max } = this.cfg.instances;
      if (!Number.isInteger(n) || n < min || n > max) {
        throw new ControlError(
          400,
          `instances: must be an integer between ${min} and ${max}, not ${n}`,
        );
      }
      const previous = this.state.desired;
      this.evaluator.scaledByHand(this.now());
      await this.setState({ desired: n });
      // The operator's word: a slot given up after max_restarts is tried again.
      await this.slots.retryGivenUp("scale asked by an operator");
      log("info", "scale", { desired: n, previous });
      return { desired: n, previous };
    });
  }

  /** `disable` freezes the instance count at once; lifecycle management continues. */
  setAutoscaling(enabled: boolean): Promise<{ autoscaling: boolean }> {
    return this.lock.run(async () => {
      if (enabled && !this.cfg.autoscaling) {
        throw new ControlError(409, "autoscaling is off in the controller configuration");
      }
      this.evaluator.autoscalingSwitched();
      await this.setState({ autoscaling: enabled });
      log("info", enabled ? "autoscaling_enabled" : "autoscaling_disabled", {});
      return { autoscaling: enabled };
    });
  }

  /**
   * `PUT /v1/upstreams/{name}` on the control socket: checks `text` against the current
   * generation exactly as an instance would, records the list atomically, then sends it to
   * every instance that may be serving; says per instance whether it applied.
   */
  setMembers(name: string, text: string): Promise<Record<string, unknown>> {
    return this.members.set({
      name,
      text,
      config: () => this.generationConfig(this.state.configGeneration),
      targets: () => this.slots,
    });
  }

  /**
   * `GET /v1/upstreams` on the control socket: the pools of one serving instance, and whether
   * every instance holds the same api pool lists (`agree`, per instance and per pool).
   */
  async upstreams(): Promise<Record<string, unknown>> {
    const first = await this.fromServingInstance("/v1/upstreams");
    const live = [...this.slots].filter((s) => s.rec.state === "ready" || s.rec.state === "active");
    return await this.members.view(first, live);
  }

  /** GETs `path` from the admin socket of one serving instance (current generation first). */
  async fromServingInstance(
    path: string,
  ): Promise<{ id: string; generation: number; status: number; body: string }> {
    const current = this.state.configGeneration;
    const serving = [...this.slots]
      .filter((s) => s.rec.wanted && s.rec.state === "active")
      .sort((a, b) =>
        (b.rec.generation === current ? 1 : 0) - (a.rec.generation === current ? 1 : 0)
      );
    for (const s of serving) {
      try {
        const r = await adminRequest(s.rec.admin_socket, {
          method: "GET",
          path,
          timeoutMs: 5_000,
        });
        return { id: s.rec.id, generation: s.rec.generation, ...r };
      } catch (err) {
        log("warn", "admin_unreachable", {
          id: s.rec.id,
          socket: s.rec.admin_socket,
          error: String(err),
        });
      }
    }
    throw new ControlError(503, "no serving instance answered");
  }

  /**
   * Sends one admin request to every running instance (ready, active or draining) at once;
   * an instance that cannot be reached is left out and logged.
   */
  async toEveryInstance(
    req: { method: string; path: string; body?: string },
  ): Promise<{ id: string; status: number; body: string }[]> {
    const running = [...this.slots].filter((s) =>
      s.rec.state === "ready" || s.rec.state === "active" || s.rec.state === "draining"
    );
    const answers = await Promise.all(running.map(async (s) => {
      try {
        const r = await adminRequest(s.rec.admin_socket, { ...req, timeoutMs: 5_000 });
        return { id: s.rec.id, ...r };
      } catch (err) {
        log("warn", "admin_unreachable", {
          id: s.rec.id,
          socket: s.rec.admin_socket,
          error: String(err),
        });
        return null;
      }
    }));
    return answers.filter((a) => a !== null);
  }

  /** `GET /metrics` on the control socket: the controller's own metrics (Prometheus text). */
  metricsText(): string {
    return this.metrics.render();
  }

  /** Every instance and generation, the desired count and the last evaluation. */
  async status(): Promise<ControllerStatus> {
    return statusView({
      pid: Deno.pid,
      startedAt: this.started,
      cfg: this.cfg,
      state: this.state,
      stopping: this.stopping,
      nextStep: this.plan(),
      taskset: this.deps.taskset,
      tcpMigrateReq: this.migrateReq.value,
      warnings: this.migrateReq.warning === null ? [] : [this.migrateReq.warning],
      configGenerations: await this.configGenerations.list(),
      generationPath: (n) => this.configGenerations.path(n),
      slots: this.slots,
      lastEvaluation: this.evaluator.last,
    });
  }
}

async function readConfigText(file: string): Promise<string> {
  try {
    return await Deno.readTextFile(file);
  } catch (e) {
    throw new ConfigError(file, [`cannot read file: ${e instanceof Error ? e.message : e}`]);
  }
}

/** MemAvailable of this host in bytes; null when it cannot be read. */
function hostFreeRam(): number | null {
  try {
    return Deno.systemMemoryInfo().available;
  } catch {
    return null;
  }
}

function mib(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(0);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
