/**
 * The instance lifecycle of ADR-0035 as a pure transition function:
 *
 *   Stopped -> Starting -> Warming -> Ready -> Active -> Draining -> Stopped
 *
 * and Failed from every state (an exit that was not asked for, a start timeout, a drain
 * timeout followed by a forced stop, an active instance that failed liveness). A Failed or Stopped slot is started again with `spawn`.
 */

/** Every state of an instance, in lifecycle order (the metrics list them in this order). */
export const INSTANCE_STATES = [
  "stopped",
  "starting",
  "warming",
  "ready",
  "active",
  "draining",
  "failed",
] as const;

export type InstanceState = typeof INSTANCE_STATES[number];

export type LifecycleEvent =
  /** The process was spawned with its id, generation and CPU set. */
  | { readonly type: "spawn" }
  /** The readiness probe answered `warming`. */
  | { readonly type: "warming" }
  /** The readiness probe answered `ready`: prepared, not bound. */
  | { readonly type: "ready" }
  /** The readiness probe answered `active` after SIGUSR2: listeners joined the group. */
  | { readonly type: "active" }
  /** SIGTERM was sent. */
  | { readonly type: "drain" }
  /** The process ended; `clean` is exit status 0 or SIGTERM. */
  | { readonly type: "exit"; readonly clean: boolean }
  | { readonly type: "start_timeout" }
  /** `drain_timeout + kill_grace` passed and the process was killed. */
  | { readonly type: "drain_timeout" }
  /** An active instance answered no probe for `liveness_timeout` and was killed. */
  | { readonly type: "liveness_failed" };

/** States in which a process is expected to be running. */
export const RUNNING_STATES: ReadonlySet<InstanceState> = new Set([
  "starting",
  "warming",
  "ready",
  "active",
  "draining",
]);

/** States of a start not finished yet (counted as the one action in flight). */
export const STARTING_STATES: ReadonlySet<InstanceState> = new Set([
  "starting",
  "warming",
  "ready",
]);

/**
 * The state after `event`, or `null` when the event does not apply in `state` (a late probe
 * answer for a process that already exited, say); callers ignore a `null`.
 */
export function transition(state: InstanceState, event: LifecycleEvent): InstanceState | null {
  switch (event.type) {
    case "spawn":
      return state === "stopped" || state === "failed" ? "starting" : null;
    case "warming":
      return state === "starting" ? "warming" : null;
    case "ready":
      return state === "starting" || state === "warming" ? "ready" : null;
    case "active":
      return state === "ready" ? "active" : null;
    case "drain":
      return STARTING_STATES.has(state) || state === "active" ? "draining" : null;
    case "exit":
      if (state === "draining") return event.clean ? "stopped" : "failed";
      return RUNNING_STATES.has(state) ? "failed" : null;
    case "start_timeout":
      return STARTING_STATES.has(state) ? "failed" : null;
    case "drain_timeout":
      return state === "draining" ? "failed" : null;
    case "liveness_failed":
      return state === "active" ? "failed" : null;
  }
}
