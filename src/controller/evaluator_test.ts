import assert from "node:assert/strict";
import { parseControllerConfig } from "./config.ts";
import { Evaluator, type Evidence, pressureParams, readScrape } from "./evaluator.ts";

const CFG = parseControllerConfig(
  [
    "state_dir: /run/scalws-controller",
    "config: scalws.yaml",
    "instances: {min: 1, max: 3, initial: 1}",
    "evaluation_interval: 1s",
    "scale_out_after: 3s",
    "cooldown: 30s",
    "p99_target: 100ms",
    "",
  ].join("\n"),
  "/etc/scalws/controller.yaml",
  () => [0, 1],
);

function metrics(o: { cpu: number; lag: number; inflight: number; fast: number; slow: number }) {
  return [
    `process_cpu_seconds_total ${o.cpu}`,
    `scalws_event_loop_lag_p99_seconds ${o.lag}`,
    `scalws_inflight_requests ${o.inflight}`,
    `scalws_http_request_duration_seconds_bucket{le="0.01"} ${o.fast}`,
    `scalws_http_request_duration_seconds_bucket{le="0.1"} ${o.fast + o.slow}`,
    `scalws_http_request_duration_seconds_bucket{le="+Inf"} ${o.fast + o.slow}`,
    "",
  ].join("\n");
}

Deno.test("readScrape keeps the first scrape and measures the next one against it", () => {
  const params = pressureParams(CFG);
  assert.equal(
    readScrape({
      id: "web-0",
      cpusAssigned: 1,
      text: "scalws_inflight_requests 1\n",
      at: 0,
      previous: null,
    }, params),
    null,
  );
  const first = readScrape({
    id: "web-0",
    cpusAssigned: 1,
    text: metrics({ cpu: 10, lag: 0.001, inflight: 4, fast: 100, slow: 0 }),
    at: 1_000,
    previous: null,
  }, params)!;
  assert.equal(first.evidence, null);
  assert.equal(first.scrape.cpuSeconds, 10);
  const second = readScrape({
    id: "web-0",
    cpusAssigned: 1,
    text: metrics({ cpu: 11.6, lag: 0.004, inflight: 128, fast: 100, slow: 100 }),
    at: 3_000,
    previous: first.scrape,
  }, params)!;
  // 1.6 s of CPU over 2 s; every new request in (10 ms, 100 ms]: p99 at 99.1 ms.
  assert.deepEqual(second.evidence, {
    id: "web-0",
    cpu_used: 0.8,
    lag_p99_ms: 4,
    inflight: 128,
    p99_ms: 99.1,
    pressure: { cpu: 0.8, lag: 0.8, inflight: 0.5, latency: 0.991, cpu_lag: 0.8, score: 0.991 },
  });
  // A scrape not later than the previous one gives no evidence (no interval to measure).
  assert.equal(
    readScrape({
      id: "web-0",
      cpusAssigned: 1,
      text: metrics({ cpu: 12, lag: 0, inflight: 0, fast: 0, slow: 0 }),
      at: 3_000,
      previous: second.scrape,
    }, params)!.evidence,
    null,
  );
});

function evidence(id: string, cpu_lag: number): Evidence {
  const pressure = {
    cpu: cpu_lag,
    lag: cpu_lag,
    inflight: 0,
    latency: null,
    cpu_lag,
    score: cpu_lag,
  };
  return { id, cpu_used: cpu_lag, lag_p99_ms: 1, inflight: 0, p99_ms: null, pressure };
}

Deno.test("Evaluator.due answers once per evaluation_interval, first at once", () => {
  const e = new Evaluator(CFG);
  assert.equal(e.due(5_000), true);
  assert.equal(e.due(5_999), false);
  assert.equal(e.due(6_000), true);
  assert.equal(e.due(6_500), false);
});

Deno.test("Evaluator scales out after scale_out_after of saturation, then holds the cooldown", () => {
  const e = new Evaluator(CFG);
  const at = (now: number, desired = 1, inFlight: string | null = null) =>
    e.evaluate({
      evidence: [evidence("web-10", 0.9), evidence("web-2", 0.9)],
      instances: 2,
      desired,
      enabled: true,
      inFlight,
      now,
    });
  const first = at(0);
  assert.equal(first.decision.action, "None");
  assert.equal(first.evaluation.class, "WebTierSaturated");
  assert.deepEqual(first.evaluation.evidence.map((x) => x.id), ["web-2", "web-10"]);
  assert.equal(first.evaluation.time, "1970-01-01T00:00:00.000Z");
  assert.equal(at(2_999).decision.action, "None");
  const out = at(3_000);
  assert.equal(out.decision.action, "ScaleOut");
  assert.equal(out.decision.target, 2);
  assert.equal(e.last, out.evaluation);
  assert.equal(e.state.lastActionAt, 3_000);
  assert.match(at(10_000, 2).decision.reason, /^cooldown: 23\.0s left/);
  assert.match(
    at(40_000, 2, "start web-2").decision.reason,
    /^an action is in flight: start web-2/,
  );
});

Deno.test("Evaluator without evidence reports NoData; a scale by hand starts the cooldown", () => {
  const e = new Evaluator(CFG);
  const r = e.evaluate({
    evidence: [],
    instances: 0,
    desired: 1,
    enabled: true,
    inFlight: null,
    now: 0,
  });
  assert.equal(r.evaluation.class, "NoData");
  assert.equal(r.evaluation.score, null);
  assert.equal(r.evaluation.components, null);
  e.scaledByHand(1_000);
  assert.deepEqual(e.state, { outSince: null, inSince: null, lastActionAt: 1_000 });
  e.evaluate({
    evidence: [evidence("web-0", 0.9)],
    instances: 1,
    desired: 1,
    enabled: true,
    inFlight: null,
    now: 2_000,
  });
  assert.equal(e.state.outSince, 2_000);
  e.autoscalingSwitched();
  assert.deepEqual(e.state, { outSince: null, inSince: null, lastActionAt: 1_000 });
  const off = e.evaluate({
    evidence: [evidence("web-0", 0.9)],
    instances: 1,
    desired: 1,
    enabled: false,
    inFlight: null,
    now: 99_000,
  });
  assert.equal(off.decision.action, "None");
  assert.match(off.decision.reason, /^autoscaling is disabled/);
});

Deno.test("readScrape measures app workers' CPU against their allotment; AppSaturated adds nobody", () => {
  const params = pressureParams(CFG);
  const text = (cpu: number, app: number) =>
    metrics({ cpu, lag: 0.0005, inflight: 40, fast: 10, slow: 0 }) +
    `scalws_app_cpu_seconds_total{tenant="t",app="shop"} ${app}\n` +
    `scalws_app_cpu_allotment{tenant="t",app="shop"} 2\n`;
  const first = readScrape({
    id: "web-0",
    cpusAssigned: 1,
    text: text(1, 10),
    at: 0,
    previous: null,
  }, params)!;
  const second = readScrape({
    id: "web-0",
    cpusAssigned: 1,
    text: text(1.6, 13.9),
    at: 2_000,
    previous: first.scrape,
  }, params)!;
  // 3.9 s of worker CPU in 2 s with 2 CPUs allotted: 0.975 of the allotment.
  assert.deepEqual(second.evidence!.apps, [
    { app: "t/shop", source: "workers", cpu: 1.95, allotment: 2, utilisation: 0.975 },
  ]);
  const e = new Evaluator(CFG);
  let r;
  for (let t = 0; t <= 10_000; t += 1_000) {
    r = e.evaluate({
      evidence: [second.evidence!],
      instances: 1,
      desired: 1,
      enabled: true,
      inFlight: null,
      now: t,
    });
    assert.equal(r.decision.action, "None");
  }
  assert.equal(r!.evaluation.class, "AppSaturated");
  assert.match(r!.evaluation.reason, /workers of t\/shop use 1\.95 CPU of their allotment 2\.00/);
});

Deno.test("readScrape reads PHP-FPM's busy share from its status page as an app load", () => {
  const params = pressureParams(CFG);
  const text = metrics({ cpu: 1, lag: 0.0005, inflight: 40, fast: 10, slow: 0 }) +
    `scalws_app_fpm_busy_processes{tenant="t",app="blog"} 8\n` +
    `scalws_app_fpm_processes{tenant="t",app="blog"} 8\n`;
  const first = readScrape({ id: "web-0", cpusAssigned: 1, text, at: 0, previous: null }, params)!;
  const second = readScrape({
    id: "web-0",
    cpusAssigned: 1,
    text,
    at: 1000,
    previous: first.scrape,
  }, params)!;
  assert.deepEqual(second.evidence!.apps, [
    { app: "t/blog", source: "php-fpm", cpu: 0, allotment: 8, utilisation: 1 },
  ]);
  const e = new Evaluator(CFG);
  const r = e.evaluate({
    evidence: [second.evidence!],
    instances: 1,
    desired: 1,
    enabled: true,
    inFlight: null,
    now: 0,
  });
  assert.equal(r.evaluation.class, "PhpSaturated");
  assert.match(r.evaluation.reason, /^PHP-FPM of t\/blog has 1\.00 of its 8 processes busy/);
});
