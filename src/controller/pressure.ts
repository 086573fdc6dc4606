/**
 * PressureScore v1 (ADR-0034), exactly as the architecture overview defines it:
 *
 *   cpu      = instance CPU / CPUs assigned
 *   lag      = clamp(loop lag p99 / lag_saturated)
 *   inflight = clamp(in-flight / (loops × 256))
 *   latency  = clamp(p99 / p99_target)          # optional
 *   cpu_lag       = min(cpu, lag + 0.5)
 *   PressureScore = max(cpu_lag, inflight, latency)
 *
 * High CPU alone is not pressure: a busy instance that keeps up has little loop lag.
 */

/** What one instance reported over one evaluation interval. */
export interface PressureInput {
  /** CPU time used in the interval divided by its wall time (1 = one core busy). */
  readonly cpuUsed: number;
  readonly cpusAssigned: number;
  /** Event-loop lag p99 in milliseconds. */
  readonly lagP99: number;
  readonly inflight: number;
  /** Event loops of the instance; 1 for scalwsd. */
  readonly loops: number;
  /** Request latency p99 in milliseconds, when known. */
  readonly p99?: number;
}

export interface PressureParams {
  /** Milliseconds; default 5 ms. */
  readonly lagSaturated: number;
  /** Default 256. */
  readonly inflightPerLoop: number;
  /** Milliseconds; absent leaves latency out. */
  readonly p99Target?: number;
}

/** Every component, exported and logged as evidence. */
export interface Pressure {
  readonly cpu: number;
  readonly lag: number;
  readonly inflight: number;
  /** Null without a `p99_target` or without a latency sample. */
  readonly latency: number | null;
  readonly cpu_lag: number;
  readonly score: number;
}

/** Clamps to [0, 1]. */
export function clamp(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : x;
}

export function pressureScore(i: PressureInput, p: PressureParams): Pressure {
  const cpu = i.cpuUsed / i.cpusAssigned;
  const lag = clamp(i.lagP99 / p.lagSaturated);
  const inflight = clamp(i.inflight / (i.loops * p.inflightPerLoop));
  const latency = p.p99Target !== undefined && i.p99 !== undefined
    ? clamp(i.p99 / p.p99Target)
    : null;
  const cpu_lag = Math.min(cpu, lag + 0.5);
  const score = Math.max(cpu_lag, inflight, latency ?? 0);
  return { cpu, lag, inflight, latency, cpu_lag, score };
}

/** The tier's pressure: the mean of each component over the instances measured. */
export function meanPressure(all: readonly Pressure[]): Pressure | null {
  if (all.length === 0) return null;
  const mean = (f: (p: Pressure) => number) => all.reduce((s, p) => s + f(p), 0) / all.length;
  const withLatency = all.filter((p) => p.latency !== null);
  return {
    cpu: mean((p) => p.cpu),
    lag: mean((p) => p.lag),
    inflight: mean((p) => p.inflight),
    latency: withLatency.length === 0
      ? null
      : withLatency.reduce((s, p) => s + p.latency!, 0) / withLatency.length,
    cpu_lag: mean((p) => p.cpu_lag),
    score: mean((p) => p.score),
  };
}
