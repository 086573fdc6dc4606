import assert from "node:assert/strict";
import { Collapser } from "./collapse.ts";

Deno.test("Collapser: one leader per key; waiters wake when it is done", async () => {
  const c = new Collapser();
  assert.equal(c.lead("k"), true);
  assert.equal(c.lead("k"), false);
  let woke = 0;
  const waits = [c.wait("k", 10_000), c.wait("k", 10_000)].map((p) => p.then(() => woke++));
  assert.equal(c.waiting, 2);
  await Promise.resolve();
  assert.equal(woke, 0);
  c.done("k");
  await Promise.all(waits);
  assert.equal(woke, 2);
  assert.equal(c.waiting, 0);
  assert.equal(c.busy("k"), false);
});

Deno.test("Collapser: a wait is bounded", async () => {
  const c = new Collapser();
  c.lead("k");
  const t0 = performance.now();
  await c.wait("k", 30);
  assert.ok(performance.now() - t0 >= 25);
  assert.equal(c.waiting, 0);
  c.done("k");
  await c.wait("absent", 10_000);
});
