import assert from "node:assert/strict";
import { type InstanceState, type LifecycleEvent, transition } from "./lifecycle.ts";

const STATES: InstanceState[] = [
  "stopped",
  "starting",
  "warming",
  "ready",
  "active",
  "draining",
  "failed",
];

const EVENTS: [string, LifecycleEvent][] = [
  ["spawn", { type: "spawn" }],
  ["warming", { type: "warming" }],
  ["ready", { type: "ready" }],
  ["active", { type: "active" }],
  ["drain", { type: "drain" }],
  ["exit clean", { type: "exit", clean: true }],
  ["exit unclean", { type: "exit", clean: false }],
  ["start_timeout", { type: "start_timeout" }],
  ["drain_timeout", { type: "drain_timeout" }],
  ["liveness_failed", { type: "liveness_failed" }],
];

// Rows: states in STATES order; columns: events in EVENTS order; "-" means not applicable.
const TABLE: Record<InstanceState, string[]> = {
  stopped: ["starting", "-", "-", "-", "-", "-", "-", "-", "-", "-"],
  starting: ["-", "warming", "ready", "-", "draining", "failed", "failed", "failed", "-", "-"],
  warming: ["-", "-", "ready", "-", "draining", "failed", "failed", "failed", "-", "-"],
  ready: ["-", "-", "-", "active", "draining", "failed", "failed", "failed", "-", "-"],
  active: ["-", "-", "-", "-", "draining", "failed", "failed", "-", "-", "failed"],
  draining: ["-", "-", "-", "-", "-", "stopped", "failed", "-", "failed", "-"],
  failed: ["starting", "-", "-", "-", "-", "-", "-", "-", "-", "-"],
};

Deno.test("transition follows the ADR-0035 table for every state and event", () => {
  for (const s of STATES) {
    EVENTS.forEach(([name, ev], i) => {
      const want = TABLE[s][i];
      assert.equal(transition(s, ev), want === "-" ? null : want, `${s} + ${name}`);
    });
  }
});

Deno.test("transition walks the happy path from Stopped back to Stopped", () => {
  const path: LifecycleEvent[] = [
    { type: "spawn" },
    { type: "warming" },
    { type: "ready" },
    { type: "active" },
    { type: "drain" },
    { type: "exit", clean: true },
  ];
  let s: InstanceState = "stopped";
  const seen: InstanceState[] = [s];
  for (const e of path) {
    s = transition(s, e)!;
    seen.push(s);
  }
  assert.deepEqual(seen, [
    "stopped",
    "starting",
    "warming",
    "ready",
    "active",
    "draining",
    "stopped",
  ]);
});
