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
  /**
   * A supervised application's workers are at their CPU allotment while the web tier's loops
   * keep up.
   */
  | "AppSaturated"
  /**
   * PHP-FPM has (nearly) all its processes busy while the web tier's loops keep up: the
   * architecture overview's `PhpSaturated`.
   */
  | "PhpSaturated"
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

/** How busy one application's processes are, averaged over the instances measured. */
export interface AppLoad {
  /** `tenant/app`. */
  readonly app: string;
  /** Where the figure comes from: `workers` (CPU from /proc) or `php-fpm` (its status page). */
  readonly source: "workers" | "php-fpm";
  /** CPU seconds per second used by the workers (0 for `php-fpm`). */
  readonly cpu: number;
  /** CPUs the workers may use (ready workers, at most the host's CPUs); processes for php-fpm. */
  readonly allotment: number;
  /** `cpu / allotment`, or busy processes / processes for php-fpm. */
  readonly utilisation: number;
}

/** An application at this share of its allotment or above is saturated. */
export const APP_SATURATED = 0.9;

export interface Classification {
  readonly class: PressureClass;
  /** The evidence in words, for the evaluation log line. */
  readonly reason: string;
}

const f2 = (x: number) => x.toFixed(2);

/** The most used application at or above `APP_SATURATED`, or undefined. */
function saturatedApp(apps: readonly AppLoad[]): AppLoad | undefined {
  let top: AppLoad | undefined;
  for (const a of apps) {
    if (a.utilisation >= APP_SATURATED && (top === undefined || a.utilisation > top.utilisation)) {
      top = a;
    }
  }
  return top;
}

/**
 * Classifies the tier's pressure. A saturated web tier comes first; then an application at its
 * CPU allotment (`apps`) while the loops keep up; then requests waiting on members.
 */
export function classify(
  p: Pressure | null,
  t: Thresholds,
  apps: readonly AppLoad[] = [],
): Classification {
  if (p === null) return { class: "NoData", reason: "no metrics from active instances yet" };
  if (p.cpu_lag >= t.scaleOutAbove) {
    return {
      class: "WebTierSaturated",
      reason: `web tier cpu_lag ${f2(p.cpu_lag)} >= ${f2(t.scaleOutAbove)} ` +
        `(cpu ${f2(p.cpu)}, lag ${f2(p.lag)}): event loops are falling behind`,
    };
  }
  const app = saturatedApp(apps);
  if (app !== undefined) {
    const what = app.source === "php-fpm"
      ? `PHP-FPM of ${app.app} has ${f2(app.utilisation)} of its ${app.allotment} processes busy`
      : `workers of ${app.app} use ${f2(app.cpu)} CPU of their allotment ${f2(app.allotment)} ` +
        `(${f2(app.utilisation)})`;
    return {
      class: app.source === "php-fpm" ? "PhpSaturated" : "AppSaturated",
      reason: `${what} while web tier cpu_lag ${f2(p.cpu_lag)} < ${f2(t.scaleOutAbove)}: ` +
        "the application is the bottleneck; adding scalws instances would not help",
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
