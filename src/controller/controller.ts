/**
 * The controller: starts, activates, drains and restarts scalwsd instances on one host, rolls
 * configuration generations and scales on PressureScore. It never touches client traffic:
 * instances bind their own `reusePort` listeners, and keep serving if the controller stops.
 *
 * One loop (`tick`, every `probe_interval`): observe (process alive? `/readyz`), enforce
 * timeouts, take the reconciler's next step, restart failed slots whose backoff ended, and
 * every `evaluation_interval` scrape `/metrics`, classify and decide.
 */
import { ConfigError } from "../config/errors.ts";
import { log } from "../observe/log.ts";
import { Lock } from "../base/lock.ts";
import { ensureDir, writeFileAtomic } from "./atomic_file.ts";
import { classify } from "./classify.ts";
import type { ControllerConfig } from "./config.ts";
import { decide, type Decision, type DecisionState, INITIAL_DECISION_STATE } from "./decide.ts";
import { bucketsOf, parseExposition, quantileBetween, sumOf } from "./exposition.ts";
import { GenerationStore } from "./generations.ts";
import { cpusFor, instanceArgv, type InstanceLaunch, spawnInstance } from "./launch.ts";
import {
  type InstanceState,
  type LifecycleEvent,
  RUNNING_STATES,
  STARTING_STATES,
  transition,
} from "./lifecycle.ts";
import { meanPressure, type Pressure, pressureScore } from "./pressure.ts";
import { adminRequest, probeReady, scrapeMetrics } from "./probe.ts";
import { mismatch, readProc, readProcFile } from "./proc.ts";
import { planStep, type SlotView, type Step } from "./reconcile.ts";
import { type InstanceRecord, RecordStore, slotIndex } from "./records.ts";
import { onFailure } from "./restart_policy.ts";

/** How instances are started on this host. */
export interface ControllerDeps {
  /** The scalwsd command (`[scalwsd]`, or `[deno, run, ..., main.ts]` from source). */
  readonly command: readonly string[];
  /** Path of `taskset`, or null: CPU sets are then recorded but not enforced. */
  readonly taskset: string | null;
  /** Clock in ms since the epoch; default `Date.now`. */
  readonly now?: () => number;
}

/** The controller's own state, kept in `<state_dir>/controller.json`. */
interface SavedState {
  desired: number;
  generation: number;
  previous_generation: number | null;
  autoscaling: boolean;
}

interface LastScrape {
  readonly at: number;
  readonly cpuSeconds: number;
  readonly buckets: Map<number, number>;
}

/** Per-instance evidence of one evaluation. */
interface Evidence {
  readonly id: string;
  readonly cpu_used: number;
  readonly lag_p99_ms: number;
  readonly inflight: number;
  readonly p99_ms: number | null;
  readonly pressure: Pressure;
}

/** A slot and what the controller knows beyond its record. */
interface Slot {
  rec: InstanceRecord;
  /** Our own child process; null for an adopted instance (watched through /proc). */
  child: Deno.ChildProcess | null;
  /** Bumped on every spawn, so events of an earlier process are dropped. */
  token: number;
  spawnedAt: number;
  drainStartedAt: number | null;
  activationSentAt: number | null;
  restartAt: number | null;
  lastScrape: LastScrape | null;
  probeFailures: number;
  /** Record writes of this slot, one after the other, each writing the latest record. */
  writing: Promise<void>;
}

/** Raised for refusals of control operations: a status and a message. */
export class ControlError extends Error {
  constructor(
    readonly status: 400 | 404 | 409 | 501 | 503,
    message: string,
    readonly errors?: readonly string[],
  ) {
    super(message);
  }
}

const PROBE_TIMEOUT = 1_000;

export class Controller {
  readonly records: RecordStore;
  readonly generations: GenerationStore;
  private readonly slots = new Map<string, Slot>();
  private readonly lock = new Lock();
  private readonly now: () => number;
  private saved!: SavedState;
  private decisionState: DecisionState = INITIAL_DECISION_STATE;
  private lastEvaluation: Record<string, unknown> | null = null;
  private nextEvaluationAt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running = false;
  private ticking: Promise<void> | null = null;
  private readonly started = Date.now();
  private stopping = false;
  private tcpMigrateReq: string | null = null;
  private savedWriting: Promise<void> = Promise.resolve();

  constructor(readonly cfg: ControllerConfig, private readonly deps: ControllerDeps) {
    this.now = deps.now ?? Date.now;
    this.records = new RecordStore(cfg.state_dir);
    this.generations = new GenerationStore(cfg.state_dir);
  }

  /** Desired instance count. */
  get desired(): number {
    return this.saved.desired;
  }

  /** The generation new instances start on. */
  get generation(): number {
    return this.saved.generation;
  }

  get autoscaling(): boolean {
    return this.saved.autoscaling;
  }

  /**
   * Prepares the state directory, creates generation 1 on a first start (throws `ConfigError`
   * if the configuration is invalid), re-adopts the instances of an earlier run, then starts
   * the loop.
   */
  async start(): Promise<void> {
    await ensureDir(this.cfg.state_dir);
    await Deno.chmod(this.cfg.state_dir, 0o700);
    await this.claimStateDir();
    for (const d of ["sockets", "logs"]) await ensureDir(`${this.cfg.state_dir}/${d}`);
    await this.records.init();
    await this.generations.init();
    const saved = await this.readSaved();
    if (saved === null) {
      const text = await readConfigText(this.cfg.config);
      const g = await this.generations.create(text, this.cfg.config);
      for (const w of g.warnings) {
        log("warn", "config_warning", { file: this.cfg.config, warning: w });
      }
      this.saved = {
        desired: this.cfg.instances.initial,
        generation: g.number,
        previous_generation: null,
        autoscaling: this.cfg.autoscaling,
      };
      log("info", "generation_created", { generation: g.number, source: this.cfg.config });
    } else {
      if (!(await this.generations.exists(saved.generation))) {
        throw new Error(`generation ${saved.generation} named in controller.json is missing`);
      }
      const desired = Math.min(
        this.cfg.instances.max,
        Math.max(this.cfg.instances.min, saved.desired),
      );
      // `autoscaling: off` in the file wins; a `disable` through the socket survives restarts.
      this.saved = { ...saved, desired, autoscaling: this.cfg.autoscaling && saved.autoscaling };
    }
    await this.writeSaved();
    await this.adopt();
    this.tcpMigrateReq = await readProcFile("/proc/sys/net/ipv4/tcp_migrate_req");
    if (this.tcpMigrateReq !== "1") {
      log("warn", "tcp_migrate_req_off", {
        value: this.tcpMigrateReq,
        consequence:
          "connections queued on a draining instance's listener are reset instead of moving to another instance",
      });
    }
    if (this.deps.taskset === null) {
      log("warn", "cpu_affinity_unavailable", {
        reason: "taskset not found: CPU sets are recorded, not enforced",
      });
    }
    log("info", "controller_started", {
      pid: Deno.pid,
      state_dir: this.cfg.state_dir,
      generation: this.saved.generation,
      desired: this.saved.desired,
      autoscaling: this.saved.autoscaling,
      adopted: [...this.slots.values()].filter((s) => RUNNING_STATES.has(s.rec.state)).map((s) =>
        s.rec.id
      ),
    });
    this.running = true;
    this.schedule(0);
  }

  /** Stops the loop and leaves every instance running (they are re-adopted on the next start). */
  async close(): Promise<void> {
    this.running = false;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.ticking;
    for (const s of this.slots.values()) {
      s.child?.unref();
      await s.writing;
    }
    await this.savedWriting;
  }

  /** Drains every instance, waits until they are gone (or killed), then stops the loop. */
  async stopAll(): Promise<void> {
    this.stopping = true;
    for (const s of this.slots.values()) {
      if (s.rec.wanted || RUNNING_STATES.has(s.rec.state)) await this.retire(s, "controller stop");
    }
    const limit = this.now() + this.cfg.drain_timeout + this.cfg.kill_grace + 2_000;
    while (
      this.now() < limit && [...this.slots.values()].some((s) => RUNNING_STATES.has(s.rec.state))
    ) {
      await sleep(Math.min(100, this.cfg.probe_interval));
    }
    await this.close();
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
    await this.checkAdopted();
    await this.probeAll();
    await this.enforceTimeouts();
    if (!this.stopping) {
      await this.step();
      await this.restartDue();
    }
    if (this.now() >= this.nextEvaluationAt) {
      this.nextEvaluationAt = this.now() + this.cfg.evaluation_interval;
      await this.evaluate();
    }
  }

  /** Adopted instances are not our children: notice their exit through /proc. */
  private async checkAdopted(): Promise<void> {
    for (const s of this.slots.values()) {
      if (s.child !== null || !RUNNING_STATES.has(s.rec.state)) continue;
      const token = s.token;
      const why = mismatch(s.rec, await readProc(s.rec.pid));
      if (why !== null) await this.onExit(s, token, { code: null, signal: null }, why);
    }
  }

  private async probeAll(): Promise<void> {
    const live = [...this.slots.values()].filter((s) =>
      RUNNING_STATES.has(s.rec.state) && s.rec.state !== "draining"
    );
    await Promise.all(live.map(async (s) => {
      const token = s.token;
      const r = await probeReady(s.rec.metrics, PROBE_TIMEOUT);
      if (token !== s.token || !RUNNING_STATES.has(s.rec.state)) return;
      if (r === null) {
        s.probeFailures++;
        if (s.rec.state === "active" && s.probeFailures === 3) {
          log("warn", "instance_unreachable", { id: s.rec.id, metrics: s.rec.metrics });
        }
        return;
      }
      if (s.probeFailures >= 3 && s.rec.state === "active") {
        log("info", "instance_reachable", { id: s.rec.id });
      }
      s.probeFailures = 0;
      if (r.generation !== s.rec.generation) {
        log("warn", "generation_mismatch", {
          id: s.rec.id,
          recorded: s.rec.generation,
          reported: r.generation,
        });
      }
      if (r.state === "warming") await this.apply(s, { type: "warming" });
      if (r.state === "ready" || r.state === "active") await this.apply(s, { type: "ready" });
      if (r.state === "active") await this.apply(s, { type: "active" });
      if (s.rec.state === "ready") this.activate(s);
    }));
  }

  /** SIGUSR2: join the reuseport group. Sent again if the instance has not answered in 2 s. */
  private activate(s: Slot): void {
    if (!s.rec.wanted || this.stopping) return;
    const now = this.now();
    if (s.activationSentAt !== null && now - s.activationSentAt < 2_000) return;
    s.activationSentAt = now;
    if (signal(s.rec.pid, "SIGUSR2")) log("info", "activating", { id: s.rec.id, pid: s.rec.pid });
  }

  private async enforceTimeouts(): Promise<void> {
    const now = this.now();
    for (const s of this.slots.values()) {
      if (STARTING_STATES.has(s.rec.state) && now - s.spawnedAt > this.cfg.start_timeout) {
        signal(s.rec.pid, "SIGKILL");
        log("error", "start_timeout", {
          id: s.rec.id,
          pid: s.rec.pid,
          state: s.rec.state,
          start_timeout_ms: this.cfg.start_timeout,
        });
        await this.apply(s, { type: "start_timeout" }, "start timeout");
      } else if (
        s.rec.state === "draining" && s.drainStartedAt !== null &&
        now - s.drainStartedAt > this.cfg.drain_timeout + this.cfg.kill_grace
      ) {
        signal(s.rec.pid, "SIGKILL");
        log("error", "drain_timeout", {
          id: s.rec.id,
          pid: s.rec.pid,
          waited_ms: now - s.drainStartedAt,
          action: "killed",
        });
        await this.apply(s, { type: "drain_timeout" }, "drain timeout, killed");
      }
    }
  }

  /** The reconciler's next step. */
  private async step(): Promise<void> {
    const step = this.plan();
    if (step.kind === "start") {
      log("info", "scale_step", {
        action: "start",
        id: step.id,
        reason: step.reason,
        generation: this.generation,
      });
      await this.spawn(step.id);
    } else if (step.kind === "retire") {
      log("info", "scale_step", { action: "retire", id: step.id, reason: step.reason });
      await this.retire(this.slots.get(step.id)!, step.reason);
    }
  }

  private plan(): Step {
    const views: SlotView[] = [...this.slots.values()].map((s) => ({
      id: s.rec.id,
      index: slotIndex(s.rec.id)!,
      state: s.rec.state,
      wanted: s.rec.wanted,
      generation: s.rec.generation,
      gaveUp: s.rec.gave_up,
    }));
    return planStep(
      views,
      this.saved.desired,
      this.saved.generation,
      2 * this.cfg.instances.max + 1,
    );
  }

  private async restartDue(): Promise<void> {
    const now = this.now();
    for (const s of this.slots.values()) {
      if (s.rec.state !== "failed" || !s.rec.wanted || s.rec.gave_up) continue;
      if (s.restartAt === null || s.restartAt > now) continue;
      s.restartAt = null;
      log("info", "restarting", { id: s.rec.id, failures_in_window: s.rec.failures.length });
      await this.spawn(s.rec.id);
    }
  }

  // ---- lifecycle actions ----

  /** Starts (or restarts) slot `id` on the current generation. */
  private async spawn(id: string): Promise<void> {
    const index = slotIndex(id)!;
    const dir = this.cfg.state_dir;
    const old = this.slots.get(id);
    const launch: InstanceLaunch = {
      id,
      generation: this.saved.generation,
      generationPath: this.generations.path(this.saved.generation),
      cpus: cpusFor(index, this.cfg.cpus, this.cfg.cpus_per_instance),
      adminSocket: `${dir}/sockets/${id}.sock`,
      metrics: `${hostText(this.cfg.metrics_base.hostname)}:${this.cfg.metrics_base.port + index}`,
      drainTimeout: this.cfg.drain_timeout,
      logFile: `${dir}/logs/${id}.log`,
    };
    const argv = instanceArgv(this.deps.command, launch, this.deps.taskset);
    let child: Deno.ChildProcess;
    try {
      child = spawnInstance(argv, launch.logFile);
    } catch (err) {
      log("error", "spawn_failed", { id, error: String(err) });
      return;
    }
    const now = this.now();
    const iso = new Date(now).toISOString();
    const rec: InstanceRecord = {
      id,
      pid: child.pid,
      start_time: (await readProc(child.pid))?.startTime ?? 0,
      executable: realPath(this.deps.command[0]),
      cpus: launch.cpus,
      generation: launch.generation,
      state: "starting",
      wanted: true,
      metrics: launch.metrics,
      admin_socket: launch.adminSocket,
      log_file: launch.logFile,
      started_at: iso,
      state_since: iso,
      updated_at: iso,
      failures: old?.rec.failures ?? [],
      gave_up: false,
    };
    const s: Slot = {
      rec,
      child,
      token: (old?.token ?? 0) + 1,
      spawnedAt: now,
      drainStartedAt: null,
      activationSentAt: null,
      restartAt: null,
      lastScrape: null,
      probeFailures: 0,
      writing: old?.writing ?? Promise.resolve(),
    };
    this.slots.set(id, s);
    const token = s.token;
    child.status.then((st) => this.onExit(s, token, { code: st.code, signal: st.signal })).catch(
      (err) => log("error", "exit_handling_failed", { id, error: String(err) }),
    );
    await this.persist(s);
    log("info", "instance_spawned", {
      id,
      pid: child.pid,
      generation: launch.generation,
      cpus: launch.cpus,
      metrics: launch.metrics,
      log_file: launch.logFile,
    });
  }

  /** Takes a slot out of the count: drains its process, or forgets a failed one. */
  private async retire(s: Slot, reason: string): Promise<void> {
    s.restartAt = null;
    s.rec = { ...s.rec, wanted: false };
    if (RUNNING_STATES.has(s.rec.state) && s.rec.state !== "draining") {
      s.drainStartedAt = this.now();
      signal(s.rec.pid, "SIGTERM");
      log("info", "draining", {
        id: s.rec.id,
        pid: s.rec.pid,
        reason,
        drain_timeout_ms: this.cfg.drain_timeout,
      });
      await this.apply(s, { type: "drain" });
    } else {
      await this.persist(s);
    }
  }

  private async onExit(
    s: Slot,
    token: number,
    st: { code: number | null; signal: string | null },
    why?: string,
  ): Promise<void> {
    if (token !== s.token || !RUNNING_STATES.has(s.rec.state)) return;
    // An adopted process's exit status is unknown; leaving while draining counts as clean.
    const clean = st.code === 0 || st.signal === "SIGTERM" ||
      (st.code === null && st.signal === null);
    const draining = s.rec.state === "draining";
    const reason = why ?? (draining ? "drained" : "exited unexpectedly");
    s.rec = { ...s.rec, last_exit: { code: st.code, signal: st.signal, reason } };
    log(draining && clean ? "info" : "error", "instance_exited", {
      id: s.rec.id,
      pid: s.rec.pid,
      state: s.rec.state,
      code: st.code,
      signal: st.signal,
      reason,
    });
    await this.apply(s, { type: "exit", clean: draining ? clean : false }, reason);
  }

  /** Applies a lifecycle event; on Failed, schedules a restart or gives the slot up. */
  private async apply(s: Slot, ev: LifecycleEvent, reason?: string): Promise<void> {
    const from = s.rec.state;
    const to = transition(from, ev);
    if (to === null) return;
    const iso = new Date(this.now()).toISOString();
    s.rec = { ...s.rec, state: to, state_since: iso };
    if (to !== "active") s.lastScrape = null;
    log("info", "instance_state", {
      id: s.rec.id,
      pid: s.rec.pid,
      from,
      to,
      generation: s.rec.generation,
    });
    if (to === "failed") this.onFailed(s, from, reason ?? ev.type);
    await this.persist(s);
  }

  private onFailed(s: Slot, from: InstanceState, reason: string): void {
    if (!s.rec.wanted) return;
    const now = this.now();
    // A new generation that cannot start aborts its rolling reload: old instances keep serving.
    const serving = [...this.slots.values()].filter((o) =>
      o !== s && o.rec.wanted && o.rec.state === "active" && o.rec.generation !== s.rec.generation
    );
    if (
      STARTING_STATES.has(from) && s.rec.generation === this.saved.generation && serving.length > 0
    ) {
      const back = Math.max(...serving.map((o) => o.rec.generation));
      log("error", "rollout_aborted", {
        generation: this.saved.generation,
        back_to: back,
        id: s.rec.id,
        reason,
      });
      // Nothing to roll back to from here: the failed generation is not a rollback target.
      this.saved = { ...this.saved, previous_generation: null, generation: back };
      this.writeSaved().catch((err) => log("error", "state_write_failed", { error: String(err) }));
    }
    const d = onFailure(s.rec.failures, now, {
      maxRestarts: this.cfg.max_restarts,
      window: this.cfg.restart_window,
    });
    if (d.restart) {
      s.restartAt = now + d.delay;
      s.rec = { ...s.rec, failures: d.failures };
      log("warn", "restart_scheduled", {
        id: s.rec.id,
        in_ms: d.delay,
        failures_in_window: d.failures.length,
        reason,
      });
    } else {
      s.restartAt = null;
      s.rec = { ...s.rec, failures: d.failures, gave_up: true };
      log("error", "instance_gave_up", {
        alert: true,
        id: s.rec.id,
        failures_in_window: d.failures.length,
        max_restarts: this.cfg.max_restarts,
        restart_window_ms: this.cfg.restart_window,
        reason: "more failures than max_restarts within restart_window: the slot stays failed",
      });
    }
  }

  /** Writes the slot's record; writes are chained so the file always ends with the latest one. */
  private persist(s: Slot): Promise<void> {
    s.rec = { ...s.rec, updated_at: new Date(this.now()).toISOString() };
    s.writing = s.writing.then(() => this.records.write(s.rec)).catch((err) => {
      log("error", "record_write_failed", { id: s.rec.id, error: String(err) });
    });
    return s.writing;
  }

  // ---- restart of the controller ----

  /** Reads the records of an earlier run: verified live instances are adopted, never restarted. */
  private async adopt(): Promise<void> {
    const records = await this.records.readAll((file, reason) =>
      log("warn", "record_unreadable", { file, reason })
    );
    const now = this.now();
    for (const rec of records) {
      const s: Slot = {
        rec,
        child: null,
        token: 1,
        spawnedAt: Date.parse(rec.started_at) || now,
        drainStartedAt: rec.state === "draining" ? Date.parse(rec.state_since) || now : null,
        activationSentAt: null,
        restartAt: null,
        lastScrape: null,
        probeFailures: 0,
        writing: Promise.resolve(),
      };
      this.slots.set(rec.id, s);
      if (RUNNING_STATES.has(rec.state)) {
        const why = mismatch(rec, await readProc(rec.pid));
        if (why === null) {
          log("info", "adopted", {
            id: rec.id,
            pid: rec.pid,
            state: rec.state,
            generation: rec.generation,
          });
          continue;
        }
        log("warn", "not_adopted", { id: rec.id, pid: rec.pid, reason: why });
        await this.onExit(
          s,
          s.token,
          { code: null, signal: null },
          `gone while the controller was away: ${why}`,
        );
      } else if (rec.state === "failed" && rec.wanted && !rec.gave_up) {
        s.restartAt = now;
      }
    }
  }

  /** One controller per state directory: refuses to start while the recorded one still runs. */
  private async claimStateDir(): Promise<void> {
    const file = `${this.cfg.state_dir}/controller.pid`;
    try {
      const other = JSON.parse(await Deno.readTextFile(file)) as {
        pid: number;
        start_time: number;
      };
      const info = other.pid === Deno.pid ? null : await readProc(other.pid);
      if (info !== null && info.startTime === other.start_time) {
        throw new Error(
          `another controller (PID ${other.pid}) uses the state directory ${this.cfg.state_dir}`,
        );
      }
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound) && !(err instanceof SyntaxError)) throw err;
    }
    const me = await readProc(Deno.pid);
    await writeFileAtomic(
      file,
      JSON.stringify({ pid: Deno.pid, start_time: me?.startTime ?? 0 }) + "\n",
    );
  }

  private async readSaved(): Promise<SavedState | null> {
    try {
      return JSON.parse(
        await Deno.readTextFile(`${this.cfg.state_dir}/controller.json`),
      ) as SavedState;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return null;
      throw new Error(
        `cannot read ${this.cfg.state_dir}/controller.json: ${(err as Error).message}`,
      );
    }
  }

  /** Chained like `persist`: concurrent writes end with the latest state. */
  private writeSaved(): Promise<void> {
    const file = `${this.cfg.state_dir}/controller.json`;
    const next = this.savedWriting.then(() =>
      writeFileAtomic(file, JSON.stringify(this.saved, null, 2) + "\n")
    );
    this.savedWriting = next.catch(() => {});
    return next;
  }

  // ---- autoscaling ----

  private async evaluate(): Promise<void> {
    const active = [...this.slots.values()].filter((s) => s.rec.wanted && s.rec.state === "active");
    const evidence: Evidence[] = [];
    await Promise.all(active.map(async (s) => {
      const token = s.token;
      const text = await scrapeMetrics(s.rec.metrics, PROBE_TIMEOUT);
      if (text === null || token !== s.token || s.rec.state !== "active") return;
      const at = this.now();
      const samples = parseExposition(text);
      const cpuSeconds = sumOf(samples, "scalws_process_cpu_seconds_total");
      const lagSeconds = sumOf(samples, "scalws_event_loop_lag_p99_seconds");
      const inflight = sumOf(samples, "scalws_inflight_requests");
      if (cpuSeconds === undefined || lagSeconds === undefined || inflight === undefined) return;
      const buckets = bucketsOf(samples, "scalws_http_request_duration_seconds");
      const prev = s.lastScrape;
      s.lastScrape = { at, cpuSeconds, buckets };
      if (prev === null || at <= prev.at) return;
      const cpuUsed = Math.max(0, (cpuSeconds - prev.cpuSeconds) / ((at - prev.at) / 1000));
      const q = quantileBetween(0.99, prev.buckets, buckets);
      const p99 = q === undefined ? undefined : q * 1000;
      const pressure = pressureScore({
        cpuUsed,
        cpusAssigned: s.rec.cpus.length,
        lagP99: lagSeconds * 1000,
        inflight,
        loops: 1,
        ...(p99 === undefined ? {} : { p99 }),
      }, {
        lagSaturated: this.cfg.lag_saturated,
        inflightPerLoop: this.cfg.inflight_per_loop,
        ...(this.cfg.p99_target === undefined ? {} : { p99Target: this.cfg.p99_target }),
      });
      evidence.push({
        id: s.rec.id,
        cpu_used: round(cpuUsed),
        lag_p99_ms: round(lagSeconds * 1000),
        inflight,
        p99_ms: p99 === undefined ? null : round(p99),
        pressure: roundAll(pressure),
      });
    }));
    evidence.sort((a, b) => slotIndex(a.id)! - slotIndex(b.id)!);
    const tier = meanPressure(evidence.map((e) => e.pressure));
    const c = classify(tier, {
      scaleOutAbove: this.cfg.scale_out_above,
      scaleInBelow: this.cfg.scale_in_below,
    });
    const step = this.plan();
    const inFlight = step.kind === "idle"
      ? null
      : step.kind === "wait"
      ? step.reason
      : `${step.kind} ${step.id}`;
    const d: Decision = decide(
      {
        classification: c,
        desired: this.saved.desired,
        enabled: this.saved.autoscaling && !this.stopping,
        inFlight,
        now: this.now(),
      },
      this.decisionState,
      {
        min: this.cfg.instances.min,
        max: this.cfg.instances.max,
        scaleOutAfter: this.cfg.scale_out_after,
        scaleInAfter: this.cfg.scale_in_after,
        cooldown: this.cfg.cooldown,
      },
    );
    this.decisionState = d.state;
    this.lastEvaluation = {
      time: new Date(this.now()).toISOString(),
      class: c.class,
      action: d.action,
      reason: d.reason,
      score: tier === null ? null : round(tier.score),
      components: tier === null ? null : roundAll(tier),
      instances: active.length,
      desired: this.saved.desired,
      evidence,
    };
    log("info", "evaluation", this.lastEvaluation);
    if (d.action !== "None") {
      this.saved = { ...this.saved, desired: d.target };
      await this.writeSaved();
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
        g = await this.generations.create(await readConfigText(this.cfg.config), this.cfg.config);
      } catch (err) {
        if (err instanceof ConfigError) {
          log("error", "reload_refused", { file: this.cfg.config, errors: err.errors });
          throw new ControlError(400, err.message, err.errors.map((e) => `${err.file}: ${e}`));
        }
        throw err;
      }
      const previous = this.saved.generation;
      this.saved = { ...this.saved, generation: g.number, previous_generation: previous };
      await this.writeSaved();
      log("info", "reload", { generation: g.number, previous, warnings: g.warnings });
      return { generation: g.number, previous, warnings: g.warnings };
    });
  }

  /** Rolls back to the previous generation (the same rolling procedure). */
  rollback(): Promise<{ generation: number; previous: number }> {
    return this.lock.run(async () => {
      const target = this.saved.previous_generation;
      if (
        target === null || target === this.saved.generation ||
        !(await this.generations.exists(target))
      ) {
        throw new ControlError(409, "no previous generation to roll back to");
      }
      const previous = this.saved.generation;
      this.saved = { ...this.saved, generation: target, previous_generation: previous };
      await this.writeSaved();
      log("info", "rollback", { generation: target, previous });
      return { generation: target, previous };
    });
  }

  /** Sets the desired instance count (`min`..`max`); starts the autoscaler's cooldown. */
  scale(n: number): Promise<{ desired: number; previous: number }> {
    return this.lock.run(async () => {
      const { min, max } = this.cfg.instances;
      if (!Number.isInteger(n) || n < min || n > max) {
        throw new ControlError(
          400,
          `instances: must be an integer between ${min} and ${max}, not ${n}`,
        );
      }
      const previous = this.saved.desired;
      this.saved = { ...this.saved, desired: n };
      this.decisionState = { outSince: null, inSince: null, lastActionAt: this.now() };
      await this.writeSaved();
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
      this.saved = { ...this.saved, autoscaling: enabled };
      this.decisionState = {
        ...INITIAL_DECISION_STATE,
        lastActionAt: this.decisionState.lastActionAt,
      };
      await this.writeSaved();
      log("info", enabled ? "autoscaling_enabled" : "autoscaling_disabled", {});
      return { autoscaling: enabled };
    });
  }

  /** GETs `path` from the admin socket of one serving instance (current generation first). */
  async fromServingInstance(
    path: string,
  ): Promise<{ id: string; generation: number; status: number; body: string }> {
    const serving = [...this.slots.values()]
      .filter((s) => s.rec.wanted && s.rec.state === "active")
      .sort((a, b) =>
        (b.rec.generation === this.generation ? 1 : 0) -
        (a.rec.generation === this.generation ? 1 : 0)
      );
    for (const s of serving) {
      try {
        const r = await adminRequest(s.rec.admin_socket, "GET", path, 5_000);
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

  /** Every instance and generation, the desired count and the last evaluation. */
  async status(): Promise<Record<string, unknown>> {
    const gens = await this.generations.list();
    const slots = [...this.slots.values()].sort((a, b) =>
      slotIndex(a.rec.id)! - slotIndex(b.rec.id)!
    );
    return {
      controller: {
        pid: Deno.pid,
        started_at: new Date(this.started).toISOString(),
        state_dir: this.cfg.state_dir,
        config: this.cfg.config,
        generation: this.saved.generation,
        previous_generation: this.saved.previous_generation,
        desired: this.saved.desired,
        min: this.cfg.instances.min,
        max: this.cfg.instances.max,
        autoscaling: this.saved.autoscaling,
        stopping: this.stopping,
        next_step: stepText(this.plan()),
        limits: {
          cpu_affinity: this.deps.taskset === null ? "unenforced (taskset not found)" : "taskset",
          cgroups: "not used: CPU, memory and pids limits are unenforced",
        },
        tcp_migrate_req: this.tcpMigrateReq,
      },
      generations: gens.map((n) => ({
        number: n,
        path: this.generations.path(n),
        current: n === this.saved.generation,
        instances:
          slots.filter((s) => s.rec.generation === n && RUNNING_STATES.has(s.rec.state)).length,
      })),
      instances: slots.map((s) => ({
        ...s.rec,
        adopted: s.child === null && RUNNING_STATES.has(s.rec.state),
        restart_at: s.restartAt === null ? null : new Date(s.restartAt).toISOString(),
      })),
      last_evaluation: this.lastEvaluation,
    };
  }
}

function stepText(step: Step): string {
  switch (step.kind) {
    case "idle":
      return "idle";
    case "wait":
      return `wait: ${step.reason}`;
    default:
      return `${step.kind} ${step.id}: ${step.reason}`;
  }
}

async function readConfigText(file: string): Promise<string> {
  try {
    return await Deno.readTextFile(file);
  } catch (e) {
    throw new ConfigError(file, [`cannot read file: ${e instanceof Error ? e.message : e}`]);
  }
}

function signal(pid: number, sig: Deno.Signal): boolean {
  try {
    Deno.kill(pid, sig);
    return true;
  } catch (err) {
    log("warn", "signal_failed", { pid, signal: sig, error: String(err) });
    return false;
  }
}

function realPath(p: string): string {
  try {
    return Deno.realPathSync(p);
  } catch {
    return p;
  }
}

function hostText(h: string): string {
  return h.includes(":") ? `[${h}]` : h;
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function roundAll(p: Pressure): Pressure {
  return {
    cpu: round(p.cpu),
    lag: round(p.lag),
    inflight: round(p.inflight),
    latency: p.latency === null ? null : round(p.latency),
    cpu_lag: round(p.cpu_lag),
    score: round(p.score),
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
