import assert from "node:assert/strict";
import type { InstanceState } from "./lifecycle.ts";
import { freeIndex, planStep, type SlotView, type Step } from "./reconcile.ts";

function slot(
  index: number,
  state: InstanceState,
  generation = 1,
  extra: Partial<SlotView> = {},
): SlotView {
  return { id: `web-${index}`, index, state, wanted: true, generation, gaveUp: false, ...extra };
}

/** Applies a step the way the controller would, with every start succeeding at once. */
function apply(slots: SlotView[], step: Step, generation: number): SlotView[] {
  if (step.kind === "start") {
    const i = Number(step.id.slice(4));
    return [...slots.filter((s) => s.index !== i), slot(i, "active", generation)];
  }
  if (step.kind === "retire") {
    return slots.map((
      s,
    ) => (s.id === step.id ? { ...s, wanted: false, state: "stopped" as const } : s));
  }
  return slots;
}

Deno.test("planStep starts up to the desired count, one at a time", () => {
  assert.deepEqual(planStep([], { desired: 2, configGeneration: 1, indexLimit: 8 }), {
    kind: "start",
    id: "web-0",
    reason: "0 instances, 2 wanted",
  });
  assert.deepEqual(
    planStep([slot(0, "warming")], { desired: 2, configGeneration: 1, indexLimit: 8 }),
    {
      kind: "wait",
      reason: "web-0 is warming",
    },
  );
  assert.deepEqual(
    planStep([slot(0, "active")], { desired: 2, configGeneration: 1, indexLimit: 8 }),
    {
      kind: "start",
      id: "web-1",
      reason: "1 instances, 2 wanted",
    },
  );
  assert.deepEqual(
    planStep([slot(0, "active"), slot(1, "active")], {
      desired: 2,
      configGeneration: 1,
      indexLimit: 8,
    }),
    { kind: "idle" },
  );
});

Deno.test("planStep scales in from the highest id, failed slots first", () => {
  const three = [slot(0, "active"), slot(1, "active"), slot(2, "active")];
  assert.deepEqual(planStep(three, { desired: 1, configGeneration: 1, indexLimit: 8 }), {
    kind: "retire",
    id: "web-2",
    reason: "3 instances, 1 wanted",
  });
  const failed = [slot(0, "active"), slot(1, "failed"), slot(2, "active")];
  assert.equal(
    (planStep(failed, { desired: 2, configGeneration: 1, indexLimit: 8 }) as { id: string }).id,
    "web-1",
  );
  const gaveUp = [slot(0, "failed"), slot(1, "failed", 1, { gaveUp: true }), slot(2, "active")];
  assert.equal(
    (planStep(gaveUp, { desired: 2, configGeneration: 1, indexLimit: 8 }) as { id: string }).id,
    "web-1",
  );
});

Deno.test("planStep rolls a reload one instance at a time, never below the desired count", () => {
  let slots = [slot(0, "active"), slot(1, "active")];
  const trace: string[] = [];
  for (let i = 0; i < 10; i++) {
    const step = planStep(slots, { desired: 2, configGeneration: 2, indexLimit: 8 });
    if (step.kind === "idle") break;
    trace.push(`${step.kind} ${"id" in step ? step.id : ""}`);
    slots = apply(slots, step, 2);
    const active = slots.filter((s) => s.wanted && s.state === "active").length;
    assert.ok(active >= 2, `capacity dropped to ${active} after ${trace.at(-1)}`);
  }
  assert.deepEqual(trace, ["start web-2", "retire web-1", "start web-1", "retire web-0"]);
  assert.deepEqual(
    slots.filter((s) => s.wanted).map((s) => [s.id, s.generation]).sort(),
    [["web-1", 2], ["web-2", 2]],
  );
});

Deno.test("planStep explains a rolling start and a generation retirement", () => {
  const slots = [slot(0, "active", 1), slot(1, "active", 2)];
  assert.deepEqual(planStep(slots, { desired: 2, configGeneration: 2, indexLimit: 8 }), {
    kind: "start",
    id: "web-2",
    reason: "rolling to generation 2: web-0 (generation 1) to replace",
  });
  assert.deepEqual(
    planStep([...slots, slot(2, "active", 2)], { desired: 2, configGeneration: 2, indexLimit: 8 }),
    {
      kind: "retire",
      id: "web-0",
      reason: "replaced by generation 2",
    },
  );
});

Deno.test("planStep handles a reload while scaling: new starts use the current generation", () => {
  // Scaling 1 -> 3 while a reload to generation 2 happened after the first start.
  let slots = [slot(0, "active", 1)];
  for (let i = 0; i < 10; i++) {
    const step = planStep(slots, { desired: 3, configGeneration: 2, indexLimit: 8 });
    if (step.kind === "idle") break;
    slots = apply(slots, step, 2);
  }
  const wanted = slots.filter((s) => s.wanted);
  assert.equal(wanted.length, 3);
  assert.ok(wanted.every((s) => s.generation === 2));
});

Deno.test("freeIndex skips running and wanted-failed slots, reuses stopped ones", () => {
  const slots = [
    slot(0, "active"),
    slot(1, "draining", 1, { wanted: false }),
    slot(2, "stopped", 1, { wanted: false }),
    slot(3, "failed"),
  ];
  assert.equal(freeIndex(slots, 8), 2);
  assert.equal(
    freeIndex([slot(0, "active"), slot(1, "draining", 1, { wanted: false })], 2),
    undefined,
  );
  assert.deepEqual(
    planStep([slot(0, "draining", 1, { wanted: false })], {
      desired: 1,
      configGeneration: 1,
      indexLimit: 1,
    }),
    {
      kind: "wait",
      reason: "no free instance id (instances still draining)",
    },
  );
});

Deno.test("planStep holds starts beyond instances.min while a host limit says so", () => {
  const held = "free RAM 100 MiB is below min_free_ram 512 MiB";
  const target = { desired: 2, configGeneration: 2, indexLimit: 8, startHeld: held, min: 1 };
  assert.deepEqual(planStep([], target), {
    kind: "start",
    id: "web-0",
    reason: "0 instances, 2 wanted",
  }, "up to min: started anyway");
  assert.deepEqual(planStep([slot(0, "active", 2)], target), {
    kind: "wait",
    reason: `1 instances, 2 wanted; ${held}`,
  });
  assert.deepEqual(planStep([slot(0, "active", 1), slot(1, "active", 1)], target), {
    kind: "wait",
    reason:
      `rolling to generation 2: web-0 (generation 1), web-1 (generation 1) to replace; ${held}`,
  });
});
