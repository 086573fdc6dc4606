/**
 * Watching the instances, the observe half of the controller's loop: an adopted process that
 * ended (through /proc), the `/readyz` probe of every running instance (its state, reachability,
 * member lists, activation), and the start and drain timeouts. The probe, /proc reader and
 * signal sender are injected (fakes in tests); the clock too.
 */
import { log } from "../observe/mod.ts";
import type { ControllerConfig } from "./config.ts";
import { type LifecycleEvent, RUNNING_STATES, STARTING_STATES } from "./lifecycle.ts";
import { probeReady, type Readiness } from "./probe.ts";
import { mismatch, type ProcInfo, readProc } from "./proc.ts";
import { type ExitStatus, signal, type Slot } from "./slots.ts";

const PROBE_TIMEOUT = 1_000;

/** The slots as the watch drives them (`Slots`, or a fake). */
export interface WatchedSlots extends Iterable<Slot> {
  apply(s: Slot, ev: LifecycleEvent, reason?: string): Promise<void>;
  exited(s: Slot, token: number, st: ExitStatus, why?: string): Promise<void>;
}

export interface InstanceWatchOptions {
  readonly cfg: Pick<
    ControllerConfig,
    "start_timeout" | "drain_timeout" | "kill_grace" | "liveness_timeout"
  >;
  readonly slots: WatchedSlots;
  /** The member lists: an instance is activated only once it holds them. */
  readonly members: {
    sync(s: Slot): Promise<boolean>;
    prune(live: Iterable<Slot>): void;
  };
  readonly now: () => number;
  /** True while the controller stops every instance (none is activated then). */
  readonly stopping: () => boolean;
  /** Default: `probeReady`. */
  readonly probe?: (address: string, timeoutMs: number) => Promise<Readiness | null>;
  /** Default: `readProc`. */
  readonly readProc?: (pid: number) => Promise<ProcInfo | null>;
  /** Default: `signal` (Deno.kill, failures logged). */
  readonly signal?: (pid: number, sig: Deno.Signal) => boolean;
}

export class InstanceWatch {
  private readonly probe: (address: string, timeoutMs: number) => Promise<Readiness | null>;
  private readonly readProc: (pid: number) => Promise<ProcInfo | null>;
  private readonly signal: (pid: number, sig: Deno.Signal) => boolean;

  constructor(private readonly o: InstanceWatchOptions) {
    this.probe = o.probe ?? probeReady;
    this.readProc = o.readProc ?? readProc;
    this.signal = o.signal ?? signal;
  }

  /** Adopted instances are not our children: notice their exit through /proc. */
  async checkAdopted(): Promise<void> {
    const slots = this.o.slots;
    for (const s of slots) {
      if (s.child !== null || !RUNNING_STATES.has(s.rec.state)) continue;
      const token = s.token;
      const why = mismatch(s.rec, await this.readProc(s.rec.pid));
      if (why !== null) await slots.exited(s, token, { code: null, signal: null }, why);
    }
  }

  /** Probes every running instance that is not draining and follows what it reports. */
  async probeAll(): Promise<void> {
    const { slots, members } = this.o;
    const live = [...slots].filter((s) =>
      RUNNING_STATES.has(s.rec.state) && s.rec.state !== "draining"
    );
    await Promise.all(live.map(async (s) => {
      const token = s.token;
      const r = await this.probe(s.rec.metrics, PROBE_TIMEOUT);
      if (token !== s.token || !RUNNING_STATES.has(s.rec.state)) return;
      if (r === null) {
        s.probeFailures++;
        if (s.rec.state === "active" && s.probeFailures === 3) {
          log("warn", "instance_unreachable", { id: s.rec.id, metrics: s.rec.metrics });
        }
        if (s.rec.state === "active") await this.liveness(s);
        return;
      }
      s.unansweredSince = null;
      if (s.probeFailures >= 3 && s.rec.state === "active") {
        log("info", "instance_reachable", { id: s.rec.id });
      }
      s.probeFailures = 0;
      // The instance reports the generation it serves; it was started on the recorded one.
      if (r.generation !== s.rec.generation) {
        log("warn", "generation_mismatch", {
          id: s.rec.id,
          recorded: s.rec.generation,
          reported: r.generation,
        });
      }
      // An instance that answers ready (or active) at its first probe has prepared its
      // generation meanwhile: its record passes through warming, as ADR-0035's lifecycle does.
      if (r.state === "warming" || r.state === "ready" || r.state === "active") {
        await slots.apply(s, { type: "warming" });
      }
      if (r.state === "ready" || r.state === "active") await slots.apply(s, { type: "ready" });
      if (r.state === "active") await slots.apply(s, { type: "active" });
      // The current member lists first: an instance is activated only once it holds them.
      if (s.rec.state === "ready" || s.rec.state === "active") {
        const synced = await members.sync(s);
        if (synced && s.rec.state === "ready" && token === s.token) this.activate(s);
      }
    }));
    members.prune(slots);
  }

  /**
   * Liveness: an active instance whose probes have gone unanswered for `liveness_timeout` (its
   * process hangs, or is stopped) is killed and failed, so that it restarts with backoff; it
   * would otherwise keep taking connections from the kernel and answer none. A busy instance
   * still answers its probes within the probe timeout: load alone never restarts one.
   */
  private async liveness(s: Slot): Promise<void> {
    const now = this.o.now();
    s.unansweredSince ??= now;
    const waited = now - s.unansweredSince;
    if (waited < this.o.cfg.liveness_timeout) return;
    this.signal(s.rec.pid, "SIGKILL");
    log("error", "liveness_failed", {
      id: s.rec.id,
      pid: s.rec.pid,
      unanswered_ms: waited,
      liveness_timeout_ms: this.o.cfg.liveness_timeout,
      action: "killed",
    });
    s.unansweredSince = null;
    await this.o.slots.apply(s, { type: "liveness_failed" }, "liveness failed, killed");
  }

  /** SIGUSR2: join the reuseport group. Sent again if the instance has not answered in 2 s. */
  private activate(s: Slot): void {
    if (!s.rec.wanted || this.o.stopping()) return;
    const now = this.o.now();
    if (s.activationSentAt !== null && now - s.activationSentAt < 2_000) return;
    s.activationSentAt = now;
    if (this.signal(s.rec.pid, "SIGUSR2")) {
      log("info", "activating", { id: s.rec.id, pid: s.rec.pid });
    }
  }

  /** Kills an instance that did not start in `start_timeout` or drain in time. */
  async enforceTimeouts(): Promise<void> {
    const { cfg, slots } = this.o;
    const now = this.o.now();
    for (const s of slots) {
      if (STARTING_STATES.has(s.rec.state) && now - s.spawnedAt > cfg.start_timeout) {
        this.signal(s.rec.pid, "SIGKILL");
        log("error", "start_timeout", {
          id: s.rec.id,
          pid: s.rec.pid,
          state: s.rec.state,
          start_timeout_ms: cfg.start_timeout,
        });
        await slots.apply(s, { type: "start_timeout" }, "start timeout");
      } else if (
        s.rec.state === "draining" && s.drainStartedAt !== null &&
        now - s.drainStartedAt > cfg.drain_timeout + cfg.kill_grace
      ) {
        this.signal(s.rec.pid, "SIGKILL");
        log("error", "drain_timeout", {
          id: s.rec.id,
          pid: s.rec.pid,
          waited_ms: now - s.drainStartedAt,
          action: "killed",
        });
        await slots.apply(s, { type: "drain_timeout" }, "drain timeout, killed");
      }
    }
  }
}
