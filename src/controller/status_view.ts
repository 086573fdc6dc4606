/**
 * The controller's status as `GET /v1/status` and `scalwsd ctl status` show it: the
 * controller (its state, limits and next step), every configuration generation with the
 * instances running on it, every instance record, and the last evaluation. Pure.
 */
import type { ControllerConfig } from "./config.ts";
import type { Evaluation } from "./evaluator.ts";
import { RUNNING_STATES } from "./lifecycle.ts";
import type { Step } from "./reconcile.ts";
import { type InstanceRecord, slotIndex } from "./records.ts";
import type { ControllerState } from "./state_files.ts";

/** What the view needs of a slot. */
export interface SlotStatus {
  readonly rec: InstanceRecord;
  /** Our own child process, or null for an adopted one. */
  readonly child: unknown;
  readonly restartAt: number | null;
}

export interface StatusInput {
  readonly pid: number;
  /** Ms since the epoch. */
  readonly startedAt: number;
  readonly cfg: ControllerConfig;
  readonly state: ControllerState;
  readonly stopping: boolean;
  readonly nextStep: Step;
  readonly taskset: string | null;
  readonly tcpMigrateReq: string | null;
  /** What the operator should know and fix (`tcp_migrate_req` off, ...); empty when none. */
  readonly warnings: readonly string[];
  /** Complete configuration generations, ascending, and where each one's file is. */
  readonly configGenerations: readonly number[];
  readonly generationPath: (n: number) => string;
  readonly slots: Iterable<SlotStatus>;
  readonly lastEvaluation: Evaluation | null;
}

/** The status body; keys are part of the control API. */
export type ControllerStatus = {
  readonly controller: Record<string, unknown>;
  readonly generations: readonly {
    readonly number: number;
    readonly path: string;
    readonly current: boolean;
    readonly instances: number;
  }[];
  readonly instances: readonly Record<string, unknown>[];
  readonly last_evaluation: Evaluation | null;
};

export function statusView(i: StatusInput): ControllerStatus {
  const slots = [...i.slots].sort((a, b) => slotIndex(a.rec.id)! - slotIndex(b.rec.id)!);
  return {
    controller: {
      pid: i.pid,
      started_at: new Date(i.startedAt).toISOString(),
      state_dir: i.cfg.state_dir,
      config: i.cfg.config,
      generation: i.state.configGeneration,
      previous_generation: i.state.previousConfigGeneration,
      desired: i.state.desired,
      min: i.cfg.instances.min,
      max: i.cfg.instances.max,
      autoscaling: i.state.autoscaling,
      stopping: i.stopping,
      next_step: stepText(i.nextStep),
      limits: {
        cpu_affinity: i.taskset === null ? "unenforced (taskset not found)" : "taskset",
        cgroups: "not used: CPU, memory and pids limits are unenforced",
        max_instances: i.cfg.max_instances ?? null,
        reserved_cpus: i.cfg.reserved_cpus,
        min_free_ram: i.cfg.min_free_ram,
      },
      tcp_migrate_req: i.tcpMigrateReq,
      warnings: i.warnings,
    },
    generations: i.configGenerations.map((n) => ({
      number: n,
      path: i.generationPath(n),
      current: n === i.state.configGeneration,
      instances: slots.filter((s) => s.rec.generation === n && RUNNING_STATES.has(s.rec.state))
        .length,
    })),
    instances: slots.map((s) => ({
      ...s.rec,
      adopted: s.child === null && RUNNING_STATES.has(s.rec.state),
      restart_at: s.restartAt === null ? null : new Date(s.restartAt).toISOString(),
    })),
    last_evaluation: i.lastEvaluation,
  };
}

/** The reconciler's step in words: `idle`, `wait: REASON`, `start web-2: REASON`. */
export function stepText(step: Step): string {
  switch (step.kind) {
    case "idle":
      return "idle";
    case "wait":
      return `wait: ${step.reason}`;
    default:
      return `${step.kind} ${step.id}: ${step.reason}`;
  }
}
