/**
 * The controller's slots (`web-0`, `web-1`, ...), each holding at most one instance process,
 * and what happens to them: spawn, retire (drain, or forget a failed one), exit, and adoption
 * of the processes of an earlier controller run. Every state change goes through the pure
 * lifecycle `transition`, is logged and written to the slot's record; a Failed slot gets its
 * restart time from the pure restart policy. The clock is injected.
 */
import { log } from "../observe/mod.ts";
import type { ControllerConfig } from "./config.ts";
import type { Scrape } from "./evaluator.ts";
import type { ConfigGenerationStore } from "./generations.ts";
import { cpusFor, instanceArgv, type InstanceLaunch, spawnInstance } from "./launch.ts";
import {
  type InstanceState,
  type LifecycleEvent,
  RUNNING_STATES,
  STARTING_STATES,
  transition,
} from "./lifecycle.ts";
import { mismatch, readProc } from "./proc.ts";
import type { SlotView } from "./reconcile.ts";
import { type InstanceRecord, type RecordStore, slotIndex } from "./records.ts";
import { onFailure } from "../base/mod.ts";

/** A slot and what the controller knows beyond its record. */
export interface Slot {
  rec: InstanceRecord;
  /** Our own child process; null for an adopted instance (watched through /proc). */
  child: Deno.ChildProcess | null;
  /** Bumped on every spawn, so events of an earlier process are dropped. */
  token: number;
  spawnedAt: number;
  drainStartedAt: number | null;
  activationSentAt: number | null;
  restartAt: number | null;
  lastScrape: Scrape | null;
  probeFailures: number;
  /** Since when the probes of this process have gone unanswered (liveness); null: it answers. */
  unansweredSince?: number | null;
  /** Record writes of this slot, one after the other, each writing the latest record. */
  writing: Promise<void>;
}

/** How a process ended: its exit code or signal; both null when unknown (an adopted one). */
export interface ExitStatus {
  readonly code: number | null;
  readonly signal: string | null;
}

/** The configuration generation new instances start on, and the way back from a failed one. */
export interface Rollout {
  /** The current configuration generation. */
  current(): number;
  /** A new configuration generation could not start: go back to `back`, which serves. */
  abort(back: number): void;
}

export interface SlotsOptions {
  readonly cfg: ControllerConfig;
  /** The scalwsd command (`[scalwsd]`, or `[deno, run, ..., main.ts]` from source). */
  readonly command: readonly string[];
  /** Path of `taskset`, or null: CPU sets are then recorded but not enforced. */
  readonly taskset: string | null;
  /** Clock in ms since the epoch. */
  readonly now: () => number;
  readonly records: RecordStore;
  readonly configGenerations: ConfigGenerationStore;
  readonly rollout: Rollout;
}

/** What differs for the instance of slot `id` on configuration generation `configGeneration`. */
export function instanceLaunch(o: {
  readonly id: string;
  readonly cfg: ControllerConfig;
  readonly configGeneration: number;
  readonly configGenerationPath: string;
  readonly configBaseDir?: string;
}): InstanceLaunch {
  const index = slotIndex(o.id)!;
  const dir = o.cfg.state_dir;
  return {
    id: o.id,
    configGeneration: o.configGeneration,
    configGenerationPath: o.configGenerationPath,
    ...(o.configBaseDir === undefined ? {} : { configBaseDir: o.configBaseDir }),
    cpus: cpusFor(index, { cpus: o.cfg.cpus, perInstance: o.cfg.cpus_per_instance }),
    adminSocket: `${dir}/sockets/${o.id}.sock`,
    metrics: `${hostText(o.cfg.metrics_base.hostname)}:${o.cfg.metrics_base.port + index}`,
    drainTimeout: o.cfg.drain_timeout,
    logFile: `${dir}/logs/${o.id}.log`,
    controlSocket: o.cfg.socket,
  };
}

/**
 * The lifecycle event of a process ending in `state`: only a draining instance can end
 * cleanly (status 0, SIGTERM, or, for an adopted one, unknown); any other end is a failure.
 */
export function exitEvent(
  state: InstanceState,
  st: ExitStatus,
  why?: string,
): { event: LifecycleEvent; reason: string; expected: boolean } {
  const clean = st.code === 0 || st.signal === "SIGTERM" ||
    (st.code === null && st.signal === null);
  const draining = state === "draining";
  return {
    event: { type: "exit", clean: draining ? clean : false },
    reason: why ?? (draining ? "drained" : "exited unexpectedly"),
    expected: draining && clean,
  };
}

/**
 * A new configuration generation that cannot start aborts its rolling reload: the newest
 * older generation still serving becomes current again. Null when `failed` was not a start on
 * the current configuration generation, or nothing older serves.
 */
export function rolloutBackTo(o: {
  readonly failed: Slot;
  readonly from: InstanceState;
  readonly others: Iterable<Slot>;
  readonly current: number;
}): number | null {
  if (!STARTING_STATES.has(o.from) || o.failed.rec.generation !== o.current) return null;
  let back: number | null = null;
  for (const s of o.others) {
    if (
      s === o.failed || !s.rec.wanted || s.rec.state !== "active" ||
      s.rec.generation === o.failed.rec.generation
    ) continue;
    back = Math.max(back ?? 0, s.rec.generation);
  }
  return back;
}

/** The slot of a record read back from an earlier run; no process of ours yet. */
export function recordedSlot(rec: InstanceRecord, now: number): Slot {
  return {
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
}

/** Every slot by id, and the lifecycle actions on them. */
export class Slots implements Iterable<Slot> {
  readonly #o: SlotsOptions;
  readonly #slots = new Map<string, Slot>();

  constructor(options: SlotsOptions) {
    this.#o = options;
  }

  [Symbol.iterator](): Iterator<Slot> {
    return this.#slots.values();
  }

  get(id: string): Slot | undefined {
    return this.#slots.get(id);
  }

  /** Slots ordered by index (`web-0` first). */
  sorted(): Slot[] {
    return [...this.#slots.values()].sort((a, b) => slotIndex(a.rec.id)! - slotIndex(b.rec.id)!);
  }

  /** What the reconciler plans with. */
  views(): SlotView[] {
    return [...this.#slots.values()].map((s) => ({
      id: s.rec.id,
      index: slotIndex(s.rec.id)!,
      state: s.rec.state,
      wanted: s.rec.wanted,
      generation: s.rec.generation,
      gaveUp: s.rec.gave_up,
    }));
  }

  /** Starts (or restarts) slot `id` on the current configuration generation. */
  async spawn(id: string): Promise<void> {
    const o = this.#o;
    const old = this.#slots.get(id);
    const configGeneration = o.rollout.current();
    const launch = instanceLaunch({
      id,
      cfg: o.cfg,
      configGeneration,
      configGenerationPath: o.configGenerations.path(configGeneration),
      configBaseDir: o.configGenerations.baseDir(configGeneration),
    });
    const argv = instanceArgv(launch, { command: o.command, taskset: o.taskset });
    let child: Deno.ChildProcess;
    try {
      child = spawnInstance(argv, launch.logFile);
    } catch (err) {
      log("error", "spawn_failed", { id, error: String(err) });
      return;
    }
    const now = o.now();
    const iso = new Date(now).toISOString();
    const rec: InstanceRecord = {
      id,
      pid: child.pid,
      start_time: (await readProc(child.pid))?.startTime ?? 0,
      executable: realPath(o.command[0]),
      cpus: launch.cpus,
      generation: launch.configGeneration,
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
    this.#slots.set(id, s);
    const token = s.token;
    child.status.then((st) => this.exited(s, token, { code: st.code, signal: st.signal })).catch(
      (err) => log("error", "exit_handling_failed", { id, error: String(err) }),
    );
    await this.#persist(s);
    log("info", "instance_spawned", {
      id,
      pid: child.pid,
      generation: launch.configGeneration,
      cpus: launch.cpus,
      metrics: launch.metrics,
      log_file: launch.logFile,
    });
  }

  /** Takes a slot out of the count: drains its process, or forgets a failed one. */
  async retire(s: Slot, reason: string): Promise<void> {
    s.restartAt = null;
    s.rec = { ...s.rec, wanted: false };
    if (RUNNING_STATES.has(s.rec.state) && s.rec.state !== "draining") {
      s.drainStartedAt = this.#o.now();
      signal(s.rec.pid, "SIGTERM");
      log("info", "draining", {
        id: s.rec.id,
        pid: s.rec.pid,
        reason,
        drain_timeout_ms: this.#o.cfg.drain_timeout,
      });
      await this.apply(s, { type: "drain" });
    } else {
      await this.#persist(s);
    }
  }

  /** The process of spawn `token` ended (or, `why`, an adopted one is gone). */
  async exited(s: Slot, token: number, st: ExitStatus, why?: string): Promise<void> {
    if (token !== s.token || !RUNNING_STATES.has(s.rec.state)) return;
    const { event, reason, expected } = exitEvent(s.rec.state, st, why);
    s.rec = { ...s.rec, last_exit: { code: st.code, signal: st.signal, reason } };
    log(expected ? "info" : "error", "instance_exited", {
      id: s.rec.id,
      pid: s.rec.pid,
      state: s.rec.state,
      code: st.code,
      signal: st.signal,
      reason,
    });
    await this.apply(s, event, reason);
  }

  /** Applies a lifecycle event; on Failed, schedules a restart or gives the slot up. */
  async apply(s: Slot, ev: LifecycleEvent, reason?: string): Promise<void> {
    const from = s.rec.state;
    const to = transition(from, ev);
    if (to === null) return;
    const iso = new Date(this.#o.now()).toISOString();
    s.rec = { ...s.rec, state: to, state_since: iso };
    if (to !== "active") s.lastScrape = null;
    log("info", "instance_state", {
      id: s.rec.id,
      pid: s.rec.pid,
      from,
      to,
      generation: s.rec.generation,
    });
    if (to === "failed") this.#failed(s, from, reason ?? ev.type);
    await this.#persist(s);
  }

  #failed(s: Slot, from: InstanceState, reason: string): void {
    if (!s.rec.wanted) return;
    const { cfg, now, rollout } = this.#o;
    const at = now();
    const back = rolloutBackTo({ failed: s, from, others: this, current: rollout.current() });
    if (back !== null) {
      log("error", "rollout_aborted", {
        generation: rollout.current(),
        back_to: back,
        id: s.rec.id,
        reason,
      });
      rollout.abort(back);
    }
    const d = onFailure(s.rec.failures, at, {
      maxRestarts: cfg.max_restarts,
      window: cfg.restart_window,
    });
    if (d.restart) {
      s.restartAt = at + d.delay;
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
        max_restarts: cfg.max_restarts,
        restart_window_ms: cfg.restart_window,
        reason: "more failures than max_restarts within restart_window: the slot stays failed",
      });
    }
  }

  /**
   * An operator's `scale`: slots given up after `max_restarts` get another chance, restarted at
   * once with a fresh failure history. Returns their ids.
   */
  async retryGivenUp(reason: string): Promise<string[]> {
    const ids: string[] = [];
    for (const s of this.#slots.values()) {
      if (s.rec.state !== "failed" || !s.rec.wanted || !s.rec.gave_up) continue;
      s.rec = { ...s.rec, gave_up: false, failures: [] };
      s.restartAt = this.#o.now();
      log("info", "restart_allowed", { id: s.rec.id, reason });
      await this.#persist(s);
      ids.push(s.rec.id);
    }
    return ids;
  }

  /** Writes the slot's record; writes are chained so the file always ends with the latest one. */
  #persist(s: Slot): Promise<void> {
    s.rec = { ...s.rec, updated_at: new Date(this.#o.now()).toISOString() };
    s.writing = s.writing.then(() => this.#o.records.write(s.rec)).catch((err) => {
      log("error", "record_write_failed", { id: s.rec.id, error: String(err) });
    });
    return s.writing;
  }

  /**
   * Reads the records of an earlier run: verified live instances are adopted, never
   * restarted; the others are failed (restarted with backoff) or, failed already, restarted
   * at once. Returns the ids adopted.
   */
  async adopt(): Promise<string[]> {
    const records = await this.#o.records.readAll((file, reason) =>
      log("warn", "record_unreadable", { file, reason })
    );
    const now = this.#o.now();
    const adopted: string[] = [];
    for (const rec of records) {
      const s = recordedSlot(rec, now);
      this.#slots.set(rec.id, s);
      if (RUNNING_STATES.has(rec.state)) {
        const why = mismatch(rec, await readProc(rec.pid));
        if (why === null) {
          log("info", "adopted", {
            id: rec.id,
            pid: rec.pid,
            state: rec.state,
            generation: rec.generation,
          });
          adopted.push(rec.id);
          continue;
        }
        log("warn", "not_adopted", { id: rec.id, pid: rec.pid, reason: why });
        await this.exited(
          s,
          s.token,
          { code: null, signal: null },
          `gone while the controller was away: ${why}`,
        );
      } else if (rec.state === "failed" && rec.wanted && !rec.gave_up) {
        s.restartAt = now;
      }
    }
    return adopted;
  }

  /** Lets the controller exit while its children keep serving; waits for record writes. */
  async release(): Promise<void> {
    for (const s of this.#slots.values()) {
      s.child?.unref();
      await s.writing;
    }
  }
}

/** Sends `sig`; false (and a warning) when the process is gone. */
export function signal(pid: number, sig: Deno.Signal): boolean {
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
