/**
 * The autoscaler's evaluation, every `evaluation_interval`: each active instance's `/metrics`
 * scrape turned into evidence (CPU used since the previous scrape, loop lag, in-flight, p99),
 * the tier's mean PressureScore classified, and the decision taken with its anti-thrashing
 * state. Pure: the controller scrapes, passes the time and carries the decision out.
 */
import { type AppLoad, classify, type PressureClass } from "./classify.ts";
import type { ControllerConfig } from "./config.ts";
import {
  type Action,
  decide,
  type Decision,
  type DecisionState,
  INITIAL_DECISION_STATE,
} from "./decide.ts";
import { bucketsOf, parseExposition, quantileBetween, sumOf } from "./exposition.ts";
import { meanPressure, type Pressure, type PressureParams, pressureScore } from "./pressure.ts";
import { slotIndex } from "./records.ts";

/** What is kept of an instance's last scrape, to measure the next interval against. */
export interface Scrape {
  /** Ms since the epoch. */
  readonly at: number;
  readonly cpuSeconds: number;
  /** `scalws_http_request_duration_seconds` buckets: upper bound -> cumulative count. */
  readonly buckets: Map<number, number>;
  /** `scalws_app_cpu_seconds_total` by `tenant/app` (supervised applications). */
  readonly appCpu?: Map<string, number>;
}

/** Per-instance evidence of one evaluation, logged and shown in the status. */
export interface Evidence {
  readonly id: string;
  readonly cpu_used: number;
  readonly lag_p99_ms: number;
  readonly inflight: number;
  readonly p99_ms: number | null;
  readonly pressure: Pressure;
  /** The instance's supervised applications, when it runs any. */
  readonly apps?: readonly AppLoad[];
}

const TENANT_APP = /(?:^|,)tenant="([^"]*)",app="([^"]*)"/;

/** Series of `name` by `tenant/app`. */
function byApp(samples: ReturnType<typeof parseExposition>, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) {
    if (s.name !== name) continue;
    const m = TENANT_APP.exec(s.labels);
    if (m !== null) out.set(`${m[1]}/${m[2]}`, s.value);
  }
  return out;
}

/** Each application's CPU rate over the interval against its allotment. */
function appLoads(
  prev: Map<string, number> | undefined,
  now: Map<string, number>,
  allotment: Map<string, number>,
  seconds: number,
): AppLoad[] {
  const out: AppLoad[] = [];
  if (prev === undefined) return out;
  for (const [app, cpuNow] of now) {
    const before = prev.get(app);
    if (before === undefined) continue;
    const cpu = Math.max(0, (cpuNow - before) / seconds);
    const allot = allotment.get(app) ?? 0;
    out.push({
      app,
      source: "workers",
      cpu: round(cpu),
      allotment: allot,
      utilisation: round(allot > 0 ? cpu / allot : 0),
    });
  }
  return out;
}

/** PHP-FPM's busy share per application, from its status page (a level, not a rate). */
function fpmLoads(samples: ReturnType<typeof parseExposition>): AppLoad[] {
  const busy = byApp(samples, "scalws_app_fpm_busy_processes");
  const total = byApp(samples, "scalws_app_fpm_processes");
  const out: AppLoad[] = [];
  for (const [app, t] of total) {
    if (!(t > 0)) continue;
    const b = busy.get(app) ?? 0;
    out.push({ app, source: "php-fpm", cpu: 0, allotment: t, utilisation: round(b / t) });
  }
  return out;
}

/** Per application, the mean over the instances that report it. */
export function meanApps(evidence: readonly Evidence[]): AppLoad[] {
  const sums = new Map<
    string,
    { n: number; cpu: number; allotment: number; u: number; source: AppLoad["source"] }
  >();
  for (const e of evidence) {
    for (const a of e.apps ?? []) {
      const s = sums.get(a.app) ?? { n: 0, cpu: 0, allotment: 0, u: 0, source: a.source };
      s.n++;
      s.cpu += a.cpu;
      s.allotment += a.allotment;
      s.u += a.utilisation;
      sums.set(a.app, s);
    }
  }
  return [...sums].map(([app, s]) => ({
    app,
    source: s.source,
    cpu: round(s.cpu / s.n),
    allotment: round(s.allotment / s.n),
    utilisation: round(s.u / s.n),
  }));
}

/** One instance's scrape. */
export interface ScrapeInput {
  readonly id: string;
  readonly cpusAssigned: number;
  /** The `/metrics` text. */
  readonly text: string;
  readonly at: number;
  readonly previous: Scrape | null;
}

/**
 * Reads one scrape: null when a needed metric is missing (the previous scrape stays), else the
 * scrape to keep and, when there is an earlier one to compare with, the evidence.
 */
export function readScrape(
  input: ScrapeInput,
  params: PressureParams,
): { scrape: Scrape; evidence: Evidence | null } | null {
  const samples = parseExposition(input.text);
  const cpuSeconds = sumOf(samples, "process_cpu_seconds_total");
  const lagSeconds = sumOf(samples, "scalws_event_loop_lag_p99_seconds");
  const inflight = sumOf(samples, "scalws_inflight_requests");
  if (cpuSeconds === undefined || lagSeconds === undefined || inflight === undefined) return null;
  const buckets = bucketsOf(samples, "scalws_http_request_duration_seconds");
  const appCpu = byApp(samples, "scalws_app_cpu_seconds_total");
  const scrape: Scrape = {
    at: input.at,
    cpuSeconds,
    buckets,
    ...(appCpu.size > 0 ? { appCpu } : {}),
  };
  const prev = input.previous;
  if (prev === null || input.at <= prev.at) return { scrape, evidence: null };
  const cpuUsed = Math.max(0, (cpuSeconds - prev.cpuSeconds) / ((input.at - prev.at) / 1000));
  const apps = [
    ...appLoads(
      prev.appCpu,
      appCpu,
      byApp(samples, "scalws_app_cpu_allotment"),
      (input.at - prev.at) / 1000,
    ),
    ...fpmLoads(samples),
  ];
  const q = quantileBetween(0.99, prev.buckets, buckets);
  const p99 = q === undefined ? undefined : q * 1000;
  const pressure = pressureScore({
    cpuUsed,
    cpusAssigned: input.cpusAssigned,
    lagP99: lagSeconds * 1000,
    inflight,
    loops: 1,
    ...(p99 === undefined ? {} : { p99 }),
  }, params);
  return {
    scrape,
    evidence: {
      id: input.id,
      cpu_used: round(cpuUsed),
      lag_p99_ms: round(lagSeconds * 1000),
      inflight,
      p99_ms: p99 === undefined ? null : round(p99),
      pressure: roundAll(pressure),
      ...(apps.length > 0 ? { apps } : {}),
    },
  };
}

/** The outcome of one evaluation, logged as `evaluation` and shown as `last_evaluation`. */
export type Evaluation = {
  /** ISO time. */
  readonly time: string;
  readonly class: PressureClass;
  readonly action: Action;
  readonly reason: string;
  readonly score: number | null;
  readonly components: Pressure | null;
  /** Active instances measured. */
  readonly instances: number;
  readonly desired: number;
  readonly evidence: readonly Evidence[];
};

/** What the controller knows at an evaluation besides the evidence. */
export interface EvaluationInput {
  readonly evidence: readonly Evidence[];
  /** Active wanted instances asked for metrics. */
  readonly instances: number;
  readonly desired: number;
  /** Autoscaling on and the controller not stopping. */
  readonly enabled: boolean;
  /** The reconciler's step under way, or null when idle. */
  readonly inFlight: string | null;
  /** Why no instance may be started now (host limits), or null. */
  readonly startHeld?: string | null;
  readonly now: number;
}

/** Holds the decision's state between evaluations and the last evaluation. */
export class Evaluator {
  readonly #cfg: ControllerConfig;
  #state: DecisionState = INITIAL_DECISION_STATE;
  #nextAt = 0;
  #last: Evaluation | null = null;

  constructor(cfg: ControllerConfig) {
    this.#cfg = cfg;
  }

  /** The last evaluation, or null before the first. */
  get last(): Evaluation | null {
    return this.#last;
  }

  get state(): DecisionState {
    return this.#state;
  }

  /** True once per `evaluation_interval` (first at once); the next one is counted from `now`. */
  due(now: number): boolean {
    if (now < this.#nextAt) return false;
    this.#nextAt = now + this.#cfg.evaluation_interval;
    return true;
  }

  /** Classifies the tier's mean pressure and decides; the caller applies `decision.target`. */
  evaluate(input: EvaluationInput): { decision: Decision; evaluation: Evaluation } {
    const cfg = this.#cfg;
    const evidence = [...input.evidence].sort((a, b) => slotIndex(a.id)! - slotIndex(b.id)!);
    const tier = meanPressure(evidence.map((e) => e.pressure));
    const c = classify(tier, {
      scaleOutAbove: cfg.scale_out_above,
      scaleInBelow: cfg.scale_in_below,
    }, meanApps(evidence));
    const decision = decide(
      {
        classification: c,
        desired: input.desired,
        enabled: input.enabled,
        inFlight: input.inFlight,
        startHeld: input.startHeld ?? null,
        now: input.now,
      },
      this.#state,
      {
        min: cfg.instances.min,
        max: cfg.instances.max,
        scaleOutAfter: cfg.scale_out_after,
        scaleInAfter: cfg.scale_in_after,
        cooldown: cfg.cooldown,
      },
    );
    this.#state = decision.state;
    this.#last = {
      time: new Date(input.now).toISOString(),
      class: c.class,
      action: decision.action,
      reason: decision.reason,
      score: tier === null ? null : round(tier.score),
      components: tier === null ? null : roundAll(tier),
      instances: input.instances,
      desired: input.desired,
      evidence,
    };
    return { decision, evaluation: this.#last };
  }

  /** A count set by hand: the cooldown starts at `now`, the windows start over. */
  scaledByHand(now: number): void {
    this.#state = { outSince: null, inSince: null, lastActionAt: now };
  }

  /** Autoscaling switched on or off: the windows start over, the cooldown stays. */
  autoscalingSwitched(): void {
    this.#state = { ...INITIAL_DECISION_STATE, lastActionAt: this.#state.lastActionAt };
  }
}

/** The pressure parameters of the controller configuration. */
export function pressureParams(cfg: ControllerConfig): PressureParams {
  return {
    lagSaturated: cfg.lag_saturated,
    inflightPerLoop: cfg.inflight_per_loop,
    ...(cfg.p99_target === undefined ? {} : { p99Target: cfg.p99_target }),
  };
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function roundAll(p: Pressure): Pressure {
  return {
    cpu: round(p.cpu),
    lag: round(p.lag),
    inflight: round(p.inflight),
    latency: p.latency === null ? null : round(p.latency),
    cpu_lag: round(p.cpu_lag),
    score: round(p.score),
  };
}
