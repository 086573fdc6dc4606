import assert from "node:assert/strict";
import { classify } from "./classify.ts";
import { pressureScore } from "./pressure.ts";

const T = { scaleOutAbove: 0.75, scaleInBelow: 0.30 };
const P = { lagSaturated: 5, inflightPerLoop: 256, p99Target: 200 };
const base = { cpuUsed: 0, cpusAssigned: 1, lagP99: 0, inflight: 0, loops: 1 };

Deno.test("classify: busy CPU with lagging loops is a saturated web tier", () => {
  const c = classify(pressureScore({ ...base, cpuUsed: 0.9, lagP99: 3 }, P), T);
  assert.equal(c.class, "WebTierSaturated");
  assert.equal(
    c.reason,
    "web tier cpu_lag 0.90 >= 0.75 (cpu 0.90, lag 0.60): event loops are falling behind",
  );
});

Deno.test("classify: many requests in flight while the loops keep up is the application, not the web tier", () => {
  const c = classify(
    pressureScore({ ...base, cpuUsed: 0.9, lagP99: 0, inflight: 240, p99: 180 }, P),
    T,
  );
  assert.equal(c.class, "UpstreamSaturated");
  assert.equal(
    c.reason,
    "in-flight 0.94, latency 0.90 with web tier cpu_lag 0.50 < 0.75: requests are waiting on the " +
      "application behind the web tier; adding scalws instances would not help",
  );
});

Deno.test("classify: below scale_in_below is underused, between the thresholds is normal", () => {
  assert.deepEqual(classify(pressureScore({ ...base, cpuUsed: 0.1 }, P), T), {
    class: "Underused",
    reason: "score 0.10 < scale_in_below 0.30",
  });
  assert.deepEqual(classify(pressureScore({ ...base, cpuUsed: 0.5, lagP99: 1 }, P), T), {
    class: "Normal",
    reason: "score 0.50 between scale_in_below 0.30 and scale_out_above 0.75",
  });
  // Exactly at scale_in_below is inside the band.
  assert.equal(classify(pressureScore({ ...base, cpuUsed: 0.3 }, P), T).class, "Normal");
});

Deno.test("classify: no measurement is NoData", () => {
  assert.deepEqual(classify(null, T), {
    class: "NoData",
    reason: "no metrics from active instances yet",
  });
});

Deno.test("classify: an app pool at its CPU allotment while the loops keep up is AppSaturated", () => {
  const p = pressureScore({ ...base, cpuUsed: 0.4, lagP99: 0, inflight: 200 }, P);
  const apps = [
    { app: "t/api", source: "workers" as const, cpu: 0.5, allotment: 2, utilisation: 0.25 },
    { app: "t/shop", source: "workers" as const, cpu: 1.94, allotment: 2, utilisation: 0.97 },
  ];
  assert.deepEqual(classify(p, T, apps), {
    class: "AppSaturated",
    reason: "workers of t/shop use 1.94 CPU of their allotment 2.00 (0.97) while web tier " +
      "cpu_lag 0.40 < 0.75: the application is the bottleneck; adding scalws instances would " +
      "not help",
  });
  const fpm = [{ app: "t/blog", source: "php-fpm" as const, cpu: 0, allotment: 8, utilisation: 1 }];
  assert.match(classify(p, T, fpm).reason, /^PHP-FPM of t\/blog has 1\.00 of its 8 processes busy/);
});

Deno.test("classify: a saturated web tier wins over a busy app; a cool app changes nothing", () => {
  const hot = [{ app: "t/a", source: "workers" as const, cpu: 1, allotment: 1, utilisation: 1 }];
  assert.equal(
    classify(pressureScore({ ...base, cpuUsed: 0.9, lagP99: 3 }, P), T, hot).class,
    "WebTierSaturated",
  );
  const cool = [{
    app: "t/a",
    source: "workers" as const,
    cpu: 0.8,
    allotment: 1,
    utilisation: 0.8,
  }];
  assert.equal(
    classify(pressureScore({ ...base, cpuUsed: 0.5, lagP99: 1 }, P), T, cool).class,
    "Normal",
  );
});
