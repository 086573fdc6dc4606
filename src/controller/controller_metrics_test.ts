import assert from "node:assert/strict";
import { ControllerMetrics, type ControllerSnapshot } from "./controller_metrics.ts";
import type { Evaluation } from "./evaluator.ts";

const P = { cpu: 0.9, lag: 0.5, inflight: 0.1, latency: null, cpu_lag: 0.9, score: 0.9 };

Deno.test("ControllerMetrics exports every PressureScore component, instances by state, the count", () => {
  const evaluation = {
    time: "2026-12-02T00:00:00.000Z",
    class: "WebTierSaturated",
    action: "None",
    reason: "saturated for 1.0s of 3.0s",
    score: 0.9,
    components: P,
    instances: 1,
    desired: 1,
    evidence: [{
      id: "web-0",
      cpu_used: 0.9,
      lag_p99_ms: 2.5,
      inflight: 20,
      p99_ms: null,
      pressure: P,
    }],
  } as Evaluation;
  let snap: ControllerSnapshot = {
    desired: 2,
    configGeneration: 3,
    autoscaling: true,
    states: ["active", "starting", "failed"],
    lastEvaluation: null,
  };
  const m = new ControllerMetrics(() => snap);
  let text = m.render();
  assert.match(text, /^scalws_controller_desired_instances 2$/m);
  assert.match(text, /^scalws_controller_generation 3$/m);
  assert.match(text, /^scalws_controller_autoscaling 1$/m);
  assert.match(text, /^scalws_controller_instances\{state="active"\} 1$/m);
  assert.match(text, /^scalws_controller_instances\{state="draining"\} 0$/m);
  assert.doesNotMatch(text, /^scalws_controller_pressure\{/m, "nothing evaluated yet");
  snap = { ...snap, lastEvaluation: evaluation };
  m.evaluated(evaluation);
  text = m.render();
  for (const c of ["cpu", "lag", "inflight", "cpu_lag", "score"]) {
    assert.match(
      text,
      new RegExp(`^scalws_controller_pressure\\{component="${c}"\\} [0-9.]+$`, "m"),
    );
    assert.match(
      text,
      new RegExp(
        `^scalws_controller_instance_pressure\\{instance="web-0",component="${c}"\\} `,
        "m",
      ),
    );
  }
  assert.doesNotMatch(text, /component="latency"/, "no p99_target: no latency component");
  assert.match(
    text,
    /^scalws_controller_evaluations_total\{class="WebTierSaturated",action="None"\} 1$/m,
  );
});
