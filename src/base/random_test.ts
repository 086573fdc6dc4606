import assert from "node:assert/strict";
import { seeded } from "./random.ts";

Deno.test("seeded replays the same sequence for a seed and stays in [0, 1)", () => {
  const a = seeded(42);
  const b = seeded(42);
  const c = seeded(43);
  const xs = Array.from({ length: 1000 }, () => a());
  assert.deepEqual(xs, Array.from({ length: 1000 }, () => b()));
  assert.notDeepEqual(xs.slice(0, 10), Array.from({ length: 10 }, () => c()));
  assert.ok(xs.every((x) => x >= 0 && x < 1));
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  assert.ok(mean > 0.45 && mean < 0.55, String(mean));
});
