/**
 * The controller's own metrics, `GET /metrics` on its control socket (ADR-0034: every component
 * of PressureScore is exported): the tier's score and components and each instance's at the
 * last evaluation, instances by lifecycle state, the desired count, the current configuration
 * generation, whether autoscaling is on, and evaluations by class and action.
 */
import { type Family, Registry, type Series } from "../observe/mod.ts";
import type { Evaluation } from "./evaluator.ts";
import { INSTANCE_STATES, type InstanceState } from "./lifecycle.ts";
import type { Pressure } from "./pressure.ts";

const STATES: readonly InstanceState[] = INSTANCE_STATES;
const COMPONENTS: readonly (keyof Pressure)[] = [
  "cpu",
  "lag",
  "inflight",
  "latency",
  "cpu_lag",
  "score",
];

/** What the metrics are read from at each scrape. */
export interface ControllerSnapshot {
  readonly desired: number;
  readonly configGeneration: number;
  readonly autoscaling: boolean;
  /** The lifecycle state of every slot with a record. */
  readonly states: readonly InstanceState[];
  readonly lastEvaluation: Evaluation | null;
}

export class ControllerMetrics {
  readonly registry = new Registry();
  readonly #evaluations: Family<Series>;

  constructor(snapshot: () => ControllerSnapshot) {
    const r = this.registry;
    const pressure = r.gauge(
      "scalws_controller_pressure",
      "PressureScore v1 of the tier (mean over the active instances) and its components at the last evaluation.",
      ["component"],
    );
    const instancePressure = r.gauge(
      "scalws_controller_instance_pressure",
      "PressureScore v1 of one active instance and its components at the last evaluation.",
      ["instance", "component"],
    );
    const instances = r.gauge(
      "scalws_controller_instances",
      "Instance slots by lifecycle state.",
      ["state"],
    );
    const desired = r.gauge("scalws_controller_desired_instances", "Instances wanted.", []);
    const generation = r.gauge(
      "scalws_controller_generation",
      "The configuration generation new instances start on.",
      [],
    );
    const autoscaling = r.gauge(
      "scalws_controller_autoscaling",
      "1 while autoscaling is on, 0 while it is off (the count frozen).",
      [],
    );
    this.#evaluations = r.counter(
      "scalws_controller_evaluations_total",
      "Autoscaler evaluations by class and action.",
      ["class", "action"],
    );
    r.onCollect(() => {
      const s = snapshot();
      desired.with().set(s.desired);
      generation.with().set(s.configGeneration);
      autoscaling.with().set(s.autoscaling ? 1 : 0);
      for (const state of STATES) {
        instances.with(state).set(s.states.filter((x) => x === state).length);
      }
      pressure.series.clear();
      instancePressure.series.clear();
      const e = s.lastEvaluation;
      if (e === null) return;
      setComponents((c, v) => pressure.with(c).set(v), e.components);
      for (const i of e.evidence) {
        setComponents((c, v) => instancePressure.with(i.id, c).set(v), i.pressure);
      }
    });
  }

  /** Counts one evaluation. */
  evaluated(e: Evaluation): void {
    this.#evaluations.with(e.class, e.action).inc();
  }

  render(): string {
    return this.registry.render();
  }
}

function setComponents(set: (c: string, v: number) => void, p: Pressure | null): void {
  if (p === null) return;
  for (const c of COMPONENTS) {
    const v = p[c];
    if (v !== null) set(c, v);
  }
}
