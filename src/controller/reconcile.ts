/**
 * The reconciler's next step towards `desired` instances on the current generation, one
 * action at a time. A rolling reload needs no special mode: an instance on an older generation
 * is replaced by first starting one on the current generation (count + 1), then, once it is
 * Active, retiring an old one (count back to `desired`), so capacity never drops below it.
 * Pure: the controller carries the step out.
 */
import { type InstanceState, RUNNING_STATES, STARTING_STATES } from "./lifecycle.ts";

/** What the planner needs to know about a slot. */
export interface SlotView {
  readonly id: string;
  readonly index: number;
  readonly state: InstanceState;
  /** False once the slot is being removed. */
  readonly wanted: boolean;
  /** The configuration generation the slot's instance was started on. */
  readonly generation: number;
  /** `max_restarts` exceeded: stays Failed, still holds its place in the count. */
  readonly gaveUp: boolean;
}

export type Step =
  /** A start is in flight: wait for it to become Active (or fail). */
  | { readonly kind: "wait"; readonly reason: string }
  /** Spawn a new instance in slot `id` on the current generation. */
  | { readonly kind: "start"; readonly id: string; readonly reason: string }
  /** Drain (or, if it has no process, forget) slot `id`. */
  | { readonly kind: "retire"; readonly id: string; readonly reason: string }
  | { readonly kind: "idle" };

/** Slots that count towards the instance count: wanted and running, or wanted and Failed. */
function counted(s: SlotView): boolean {
  return s.wanted &&
    ((RUNNING_STATES.has(s.state) && s.state !== "draining") || s.state === "failed");
}

/** Retire first what serves least: given-up, then failed, then older generations, then the highest id. */
function retireRank(s: SlotView, configGeneration: number): number[] {
  return [
    s.gaveUp ? 0 : 1,
    s.state === "failed" ? 0 : 1,
    s.generation !== configGeneration ? 0 : 1,
    s.state === "active" ? 1 : 0,
    -s.index,
  ];
}

function compareRanks(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/** The lowest slot index not held by a process or a wanted slot, below `limit`. */
export function freeIndex(slots: readonly SlotView[], limit: number): number | undefined {
  const used = new Set(
    slots.filter((s) => RUNNING_STATES.has(s.state) || (s.wanted && s.state === "failed")).map((
      s,
    ) => s.index),
  );
  for (let i = 0; i < limit; i++) if (!used.has(i)) return i;
  return undefined;
}

/** What the reconciler works towards. */
export interface PlanTarget {
  /** The instance count wanted. */
  readonly desired: number;
  /** The configuration generation every instance should run. */
  readonly configGeneration: number;
  /** Slot indexes allowed: `0..indexLimit - 1`. */
  readonly indexLimit: number;
  /**
   * Why no instance may be started now (host limits: `min_free_ram`): starts then wait, except
   * those that bring the count up to `min`.
   */
  readonly startHeld?: string | null;
  /** `instances.min`; default 0. */
  readonly min?: number;
}

export function planStep(slots: readonly SlotView[], target: PlanTarget): Step {
  const { desired, configGeneration, indexLimit } = target;
  const starting = slots.find((s) => s.wanted && STARTING_STATES.has(s.state));
  if (starting) return { kind: "wait", reason: `${starting.id} is ${starting.state}` };
  const live = slots.filter(counted);
  if (live.length > desired) {
    const victim = [...live].sort((a, b) =>
      compareRanks(retireRank(a, configGeneration), retireRank(b, configGeneration))
    )[0];
    const why = victim.generation !== configGeneration
      ? `replaced by generation ${configGeneration}`
      : `${live.length} instances, ${desired} wanted`;
    return { kind: "retire", id: victim.id, reason: why };
  }
  const start = (reason: string): Step => {
    if (target.startHeld && live.length >= (target.min ?? 0)) {
      return { kind: "wait", reason: `${reason}; ${target.startHeld}` };
    }
    const i = freeIndex(slots, indexLimit);
    return i === undefined
      ? { kind: "wait", reason: "no free instance id (instances still draining)" }
      : { kind: "start", id: `web-${i}`, reason };
  };
  if (live.length < desired) return start(`${live.length} instances, ${desired} wanted`);
  const old = live.filter((s) => s.generation !== configGeneration);
  if (old.length > 0) {
    return start(
      `rolling to generation ${configGeneration}: ${
        old.map((s) => `${s.id} (generation ${s.generation})`).join(", ")
      } to replace`,
    );
  }
  return { kind: "idle" };
}
