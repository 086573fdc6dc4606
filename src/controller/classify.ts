/**
 * Classification before action: which part of the system is saturated. Only a saturated web
 * tier (CPU busy and event loops lagging) is a reason to add scalwsd instances; many requests
 * in flight or slow responses while the loops keep up mean the application behind the web
 * tier is the bottleneck, and cloning scalwsd would cost CPU and memory for nothing.
 */
import type { Pressure } from "./pressure.ts";

export type PressureClass =
  /** No active instance could be measured this interval. */
  | "NoData"
  /** cpu_lag at or above `scale_out_above`: add instances. */
  | "WebTierSaturated"
  /** In-flight or latency at or above `scale_out_above` with cpu_lag below it. */
  | "UpstreamSaturated"
  /** Score below `scale_in_below`: instances could be removed. */
  | "Underused"
  /** Between the thresholds (hysteresis band). */
  | "Normal";

export interface Thresholds {
  /** Default 0.75. */
  readonly scaleOutAbove: number;
  /** Default 0.30. */
  readonly scaleInBelow: number;
}

export interface Classification {
  readonly class: PressureClass;
  /** The evidence in words, for the evaluation log line. */
  readonly reason: string;
}

const f2 = (x: number) => x.toFixed(2);

export function classify(p: Pressure | null, t: Thresholds): Classification {
  if (p === null) return { class: "NoData", reason: "no metrics from active instances yet" };
  if (p.cpu_lag >= t.scaleOutAbove) {
    return {
      class: "WebTierSaturated",
      reason: `web tier cpu_lag ${f2(p.cpu_lag)} >= ${f2(t.scaleOutAbove)} ` +
        `(cpu ${f2(p.cpu)}, lag ${f2(p.lag)}): event loops are falling behind`,
    };
  }
  if (p.score >= t.scaleOutAbove) {
    const latency = p.latency === null ? "" : `, latency ${f2(p.latency)}`;
    return {
      class: "UpstreamSaturated",
      reason: `in-flight ${f2(p.inflight)}${latency} with web tier cpu_lag ${f2(p.cpu_lag)} < ` +
        `${f2(t.scaleOutAbove)}: requests are waiting on the application behind the web tier; ` +
        "adding scalws instances would not help",
    };
  }
  if (p.score < t.scaleInBelow) {
    return {
      class: "Underused",
      reason: `score ${f2(p.score)} < scale_in_below ${f2(t.scaleInBelow)}`,
    };
  }
  return {
    class: "Normal",
    reason: `score ${f2(p.score)} between scale_in_below ${f2(t.scaleInBelow)} and ` +
      `scale_out_above ${f2(t.scaleOutAbove)}`,
  };
}
