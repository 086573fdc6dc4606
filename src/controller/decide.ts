/**
 * The autoscaling decision with its anti-thrashing rules: scale out only after
 * `scaleOutAfter` (3 to 5 s) of a saturated web tier, scale in only after `scaleInAfter`
 * (60 s) below `scale_in_below`, nothing within `cooldown` of any action, nothing while an
 * action is in flight, never beyond `min`/`max`, nothing at all when autoscaling is off.
 * Pure: state in, state out, time passed by the caller. Every outcome carries its reason.
 */
import type { Classification } from "./classify.ts";

export interface DecisionParams {
  readonly min: number;
  readonly max: number;
  /** Milliseconds; default 3 s. */
  readonly scaleOutAfter: number;
  /** Milliseconds; default 60 s. */
  readonly scaleInAfter: number;
  /** Milliseconds; default 30 s. */
  readonly cooldown: number;
}

/** What the decision remembers between evaluations. */
export interface DecisionState {
  /** Since when the tier has been WebTierSaturated without a break. */
  readonly outSince: number | null;
  /** Since when the tier has been Underused without a break. */
  readonly inSince: number | null;
  /** Time of the last scaling action (autoscaled or asked for). */
  readonly lastActionAt: number | null;
}

export const INITIAL_DECISION_STATE: DecisionState = {
  outSince: null,
  inSince: null,
  lastActionAt: null,
};

export interface DecisionInput {
  readonly classification: Classification;
  /** The instance count the controller is working towards. */
  readonly desired: number;
  readonly enabled: boolean;
  /** Set when a start, drain, rolling reload or count change is under way. */
  readonly inFlight: string | null;
  /** Set when the host limits allow no new instance (`min_free_ram`): why. */
  readonly startHeld?: string | null;
  readonly now: number;
}

export type Action = "ScaleOut" | "ScaleIn" | "None";

export interface Decision {
  readonly action: Action;
  /** The new instance count for ScaleOut/ScaleIn. */
  readonly target: number;
  readonly reason: string;
  readonly state: DecisionState;
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

export function decide(input: DecisionInput, state: DecisionState, p: DecisionParams): Decision {
  const { classification: c, now, desired } = input;
  const outSince = c.class === "WebTierSaturated" ? state.outSince ?? now : null;
  const inSince = c.class === "Underused" ? state.inSince ?? now : null;
  const next: DecisionState = { outSince, inSince, lastActionAt: state.lastActionAt };
  const none = (reason: string): Decision => ({
    action: "None",
    target: desired,
    reason,
    state: next,
  });

  if (!input.enabled) return none(`autoscaling is disabled; ${c.reason}`);
  if (c.class === "NoData") return none(c.reason);
  if (input.inFlight !== null) return none(`an action is in flight: ${input.inFlight}`);
  if (state.lastActionAt !== null && now - state.lastActionAt < p.cooldown) {
    return none(`cooldown: ${secs(p.cooldown - (now - state.lastActionAt))} left; ${c.reason}`);
  }
  const acted = (action: Action, target: number, reason: string): Decision => ({
    action,
    target,
    reason,
    state: { outSince: null, inSince: null, lastActionAt: now },
  });
  switch (c.class) {
    case "WebTierSaturated": {
      const held = now - outSince!;
      if (held < p.scaleOutAfter) {
        return none(`saturated for ${secs(held)} of ${secs(p.scaleOutAfter)}; ${c.reason}`);
      }
      if (desired >= p.max) return none(`already at max instances (${p.max}); ${c.reason}`);
      if (input.startHeld) return none(`${input.startHeld}; ${c.reason}`);
      return acted("ScaleOut", desired + 1, `saturated for ${secs(held)}; ${c.reason}`);
    }
    case "Underused": {
      const held = now - inSince!;
      if (held < p.scaleInAfter) {
        return none(`underused for ${secs(held)} of ${secs(p.scaleInAfter)}; ${c.reason}`);
      }
      if (desired <= p.min) return none(`already at min instances (${p.min}); ${c.reason}`);
      return acted("ScaleIn", desired - 1, `underused for ${secs(held)}; ${c.reason}`);
    }
    default:
      return none(c.reason);
  }
}
