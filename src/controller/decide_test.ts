import assert from "node:assert/strict";
import type { Classification, PressureClass } from "./classify.ts";
import { decide, type Decision, type DecisionState, INITIAL_DECISION_STATE } from "./decide.ts";

const P = { min: 1, max: 3, scaleOutAfter: 3_000, scaleInAfter: 60_000, cooldown: 30_000 };
const cls = (c: PressureClass): Classification => ({ class: c, reason: `evidence of ${c}` });

/** Runs one evaluation per second for `seconds`, starting at `t0`, with a fixed class. */
function run(
  c: PressureClass,
  seconds: number,
  t0: number,
  start: DecisionState = INITIAL_DECISION_STATE,
  desired = 1,
): Decision[] {
  const out: Decision[] = [];
  let state = start;
  for (let i = 0; i <= seconds; i++) {
    const d = decide(
      { classification: cls(c), desired, enabled: true, inFlight: null, now: t0 + i * 1000 },
      state,
      P,
    );
    out.push(d);
    state = d.state;
    if (d.action !== "None") desired = d.target;
  }
  return out;
}

Deno.test("decide scales out only after 3 s of a saturated web tier", () => {
  const ds = run("WebTierSaturated", 3, 100_000);
  assert.deepEqual(ds.map((d) => d.action), ["None", "None", "None", "ScaleOut"]);
  assert.equal(ds[0].reason, "saturated for 0.0s of 3.0s; evidence of WebTierSaturated");
  assert.equal(ds[3].target, 2);
  assert.equal(ds[3].reason, "saturated for 3.0s; evidence of WebTierSaturated");
  assert.deepEqual(ds[3].state, { outSince: null, inSince: null, lastActionAt: 103_000 });
});

Deno.test("decide restarts the scale-out window when saturation breaks", () => {
  let s = run("WebTierSaturated", 2, 0).at(-1)!.state;
  s = decide(
    { classification: cls("Normal"), desired: 1, enabled: true, inFlight: null, now: 3_000 },
    s,
    P,
  ).state;
  const ds = run("WebTierSaturated", 3, 4_000, s);
  assert.deepEqual(ds.map((d) => d.action), ["None", "None", "None", "ScaleOut"]);
});

Deno.test("decide holds a cooldown after any action, then may act again", () => {
  const ds = run("WebTierSaturated", 63, 0);
  const actions = ds.flatMap((d, i) => (d.action === "None" ? [] : [[i, d.action, d.target]]));
  // Out at 3 s, then the cooldown (30 s) ends at 33 s and the window has held since 4 s.
  assert.deepEqual(actions, [[3, "ScaleOut", 2], [33, "ScaleOut", 3]]);
  assert.equal(ds[10].reason, "cooldown: 23.0s left; evidence of WebTierSaturated");
  assert.equal(ds[62].reason, "cooldown: 1.0s left; evidence of WebTierSaturated");
  assert.equal(ds[63].reason, "already at max instances (3); evidence of WebTierSaturated");
});

Deno.test("decide scales in only after 60 s below the threshold and never under min", () => {
  const ds = run("Underused", 61, 0, INITIAL_DECISION_STATE, 2);
  assert.deepEqual(ds.flatMap((d, i) => (d.action === "None" ? [] : [[i, d.action, d.target]])), [[
    60,
    "ScaleIn",
    1,
  ]]);
  assert.equal(ds[59].reason, "underused for 59.0s of 60.0s; evidence of Underused");
  const atMin = run("Underused", 61, 0, INITIAL_DECISION_STATE, 1);
  assert.ok(atMin.every((d) => d.action === "None"));
  assert.equal(atMin[61].reason, "already at min instances (1); evidence of Underused");
});

Deno.test("decide does nothing for an application bottleneck and says why", () => {
  const ds = run("UpstreamSaturated", 10, 0);
  assert.ok(ds.every((d) => d.action === "None"));
  assert.equal(ds[10].reason, "evidence of UpstreamSaturated");
});

Deno.test("decide does nothing when disabled or while an action is in flight", () => {
  const s: DecisionState = { outSince: 0, inSince: null, lastActionAt: null };
  const off = decide(
    {
      classification: cls("WebTierSaturated"),
      desired: 1,
      enabled: false,
      inFlight: null,
      now: 10_000,
    },
    s,
    P,
  );
  assert.equal(off.action, "None");
  assert.equal(off.reason, "autoscaling is disabled; evidence of WebTierSaturated");
  const busy = decide(
    {
      classification: cls("WebTierSaturated"),
      desired: 1,
      enabled: true,
      inFlight: "web-1 is starting",
      now: 10_000,
    },
    s,
    P,
  );
  assert.equal(busy.action, "None");
  assert.equal(busy.reason, "an action is in flight: web-1 is starting");
  // The window keeps running meanwhile: once free, the action is immediate.
  const free = decide(
    {
      classification: cls("WebTierSaturated"),
      desired: 1,
      enabled: true,
      inFlight: null,
      now: 11_000,
    },
    busy.state,
    P,
  );
  assert.equal(free.action, "ScaleOut");
});

Deno.test("decide never adds instances for a saturated application", () => {
  const ds = run("AppSaturated", 120, 100_000);
  assert.ok(ds.every((d) => d.action === "None"));
  assert.equal(ds[120].reason, "evidence of AppSaturated");
});

Deno.test("decide does not scale out while a host limit holds starts (min_free_ram)", () => {
  const input = {
    classification: cls("WebTierSaturated"),
    desired: 1,
    enabled: true,
    inFlight: null,
    startHeld: "free RAM 100 MiB is below min_free_ram 512 MiB",
  };
  const start = { outSince: 0, inSince: null, lastActionAt: null };
  const d = decide({ ...input, now: 10_000 }, start, P);
  assert.equal(d.action, "None");
  assert.equal(
    d.reason,
    "free RAM 100 MiB is below min_free_ram 512 MiB; evidence of WebTierSaturated",
  );
  assert.equal(decide({ ...input, startHeld: null, now: 10_000 }, start, P).action, "ScaleOut");
});
