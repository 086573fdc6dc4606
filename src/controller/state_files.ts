/**
 * The controller's own files in its state directory: `controller.json` (the desired count,
 * the configuration generation new instances start on, the previous one for a rollback, and
 * whether autoscaling is on), and `controller.pid` (one controller per state directory). Both
 * are written atomically, mode 0600.
 *
 * In the file the configuration generation is `generation` (the format stays); in the code it
 * is `configGeneration`, apart from the generation a scalwsd process serves.
 */
import { writeFileAtomic } from "../base/mod.ts";
import type { ProcInfo } from "./proc.ts";

/** What `controller.json` holds. */
export interface ControllerState {
  readonly desired: number;
  /** The configuration generation new instances start on (`generation` in the file). */
  readonly configGeneration: number;
  /** The one a rollback returns to (`previous_generation`); null when there is none. */
  readonly previousConfigGeneration: number | null;
  readonly autoscaling: boolean;
}

/** The file text: `{desired, generation, previous_generation, autoscaling}`, indented. */
export function formatControllerState(s: ControllerState): string {
  return JSON.stringify(
    {
      desired: s.desired,
      generation: s.configGeneration,
      previous_generation: s.previousConfigGeneration,
      autoscaling: s.autoscaling,
    },
    null,
    2,
  ) + "\n";
}

function positiveInteger(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 1;
}

/** Reads the file text; throws an `Error` naming every field that is missing or wrong. */
export function parseControllerState(text: string): ControllerState {
  const o = JSON.parse(text) as Record<string, unknown> | null;
  if (o === null || typeof o !== "object" || Array.isArray(o)) throw new Error("not an object");
  const errors: string[] = [];
  if (!Number.isInteger(o.desired) || (o.desired as number) < 0) {
    errors.push("desired: must be a whole number");
  }
  if (!positiveInteger(o.generation)) errors.push("generation: must be a positive integer");
  const prev = o.previous_generation ?? null;
  if (prev !== null && !positiveInteger(prev)) {
    errors.push("previous_generation: must be a positive integer or null");
  }
  if (typeof o.autoscaling !== "boolean") errors.push("autoscaling: must be true or false");
  if (errors.length > 0) throw new Error(errors.join("; "));
  return {
    desired: o.desired as number,
    configGeneration: o.generation as number,
    previousConfigGeneration: prev as number | null,
    autoscaling: o.autoscaling as boolean,
  };
}

/** What the controller configuration says about a state read back. */
export interface RestoreLimits {
  readonly min: number;
  readonly max: number;
  /** `autoscaling` of the controller file. */
  readonly autoscaling: boolean;
}

/**
 * The state of an earlier run under the current configuration: the desired count is brought
 * within `min`..`max`; `autoscaling: off` in the file wins, a `disable` through the socket
 * survives restarts.
 */
export function restoreState(saved: ControllerState, limits: RestoreLimits): ControllerState {
  return {
    ...saved,
    desired: Math.min(limits.max, Math.max(limits.min, saved.desired)),
    autoscaling: limits.autoscaling && saved.autoscaling,
  };
}

/** `<state_dir>/controller.json`; writes are chained, so the file ends with the latest state. */
export class ControllerStateFile {
  readonly path: string;
  #writing: Promise<void> = Promise.resolve();

  constructor(stateDir: string) {
    this.path = `${stateDir}/controller.json`;
  }

  /** The saved state, or null on a first start (no file). */
  async read(): Promise<ControllerState | null> {
    let text: string;
    try {
      text = await Deno.readTextFile(this.path);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return null;
      throw new Error(`cannot read ${this.path}: ${(err as Error).message}`);
    }
    try {
      return parseControllerState(text);
    } catch (err) {
      throw new Error(`cannot read ${this.path}: ${(err as Error).message}`);
    }
  }

  write(state: ControllerState): Promise<void> {
    const next = this.#writing.then(() => writeFileAtomic(this.path, formatControllerState(state)));
    this.#writing = next.catch(() => {});
    return next;
  }

  /** Resolves once every write asked for so far is done. */
  flush(): Promise<void> {
    return this.#writing;
  }
}

/** What claiming the state directory needs: this process, and how to look another one up. */
export interface ClaimOptions {
  readonly stateDir: string;
  readonly pid: number;
  readonly readProc: (pid: number) => Promise<ProcInfo | null>;
}

/**
 * One controller per state directory: refuses while the controller recorded in
 * `controller.pid` still runs (same PID and start time), then records this one. A damaged or
 * stale file is taken over.
 */
export async function claimStateDir(o: ClaimOptions): Promise<void> {
  const file = `${o.stateDir}/controller.pid`;
  try {
    const other = JSON.parse(await Deno.readTextFile(file)) as {
      pid: number;
      start_time: number;
    };
    const info = other.pid === o.pid ? null : await o.readProc(other.pid);
    if (info !== null && info.startTime === other.start_time) {
      throw new Error(
        `another controller (PID ${other.pid}) uses the state directory ${o.stateDir}`,
      );
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound) && !(err instanceof SyntaxError)) throw err;
  }
  const me = await o.readProc(o.pid);
  await writeFileAtomic(
    file,
    JSON.stringify({ pid: o.pid, start_time: me?.startTime ?? 0 }) + "\n",
  );
}
