import assert from "node:assert/strict";
import { ManualClock } from "../base/clock.ts";
import { PassiveHealth, pickLongestEjected } from "./passive_health.ts";

const S = { failures: 3, cooldown: 10_000 };

/** Fails `n` attempts begun now. Returns the flips. */
function fail(h: PassiveHealth, clock: ManualClock, n: number): boolean[] {
  const out: boolean[] = [];
  for (let i = 0; i < n; i++) out.push(h.failure(h.begin(), clock.now(), S));
  return out;
}

Deno.test("PassiveHealth ejects after the configured consecutive failures, for the cooldown", () => {
  const clock = new ManualClock();
  const h = new PassiveHealth();
  assert.deepEqual(fail(h, clock, 3), [false, false, true]);
  assert.equal(h.isEjected(clock.now()), true);
  assert.equal(h.ejectedAt, clock.now());
  assert.equal(h.ejectedUntil, clock.now() + 10_000);
  clock.advance(9_999);
  assert.equal(h.isEjected(clock.now()), true);
  clock.advance(1);
  assert.equal(h.isEjected(clock.now()), false);
  assert.equal(h.onProbation(clock.now()), true);
});

Deno.test("PassiveHealth success resets the count of consecutive failures", () => {
  const clock = new ManualClock();
  const h = new PassiveHealth();
  fail(h, clock, 2);
  assert.equal(h.success(h.begin(), clock.now()), false);
  assert.equal(h.failures, 0);
  assert.deepEqual(fail(h, clock, 2), [false, false]);
  assert.equal(h.isEjected(clock.now()), false);
});

Deno.test("PassiveHealth on probation: one success restores fully", () => {
  const clock = new ManualClock();
  const h = new PassiveHealth();
  fail(h, clock, 3);
  clock.advance(10_000);
  assert.equal(h.success(h.begin(), clock.now()), true);
  assert.equal(h.onProbation(clock.now()), false);
  assert.equal(h.ejectedUntil, 0);
  // Fully restored: one failure no longer ejects.
  assert.deepEqual(fail(h, clock, 2), [false, false]);
  assert.equal(h.isEjected(clock.now()), false);
});

Deno.test("PassiveHealth on probation: one failure ejects again at once", () => {
  const clock = new ManualClock();
  const h = new PassiveHealth();
  fail(h, clock, 3);
  clock.advance(12_000);
  assert.deepEqual(fail(h, clock, 1), [true]);
  assert.equal(h.isEjected(clock.now()), true);
  assert.equal(h.ejectedAt, clock.now());
  assert.equal(h.ejectedUntil, clock.now() + 10_000);
});

Deno.test("PassiveHealth ignores results of attempts begun before the latest ejection", () => {
  const clock = new ManualClock();
  const h = new PassiveHealth();
  const old = h.begin();
  fail(h, clock, 3);
  const until = h.ejectedUntil;
  clock.advance(1_000);
  // A stale failure does not extend it, a stale success does not end it.
  assert.equal(h.failure(old, clock.now(), S), false);
  assert.equal(h.ejectedUntil, until);
  assert.equal(h.success(old, clock.now()), false);
  assert.equal(h.isEjected(clock.now()), true);
  clock.advance(9_000);
  // Nor do they decide probation.
  assert.equal(h.success(old, clock.now()), false);
  assert.equal(h.onProbation(clock.now()), true);
  assert.equal(h.failure(old, clock.now(), S), false);
  assert.equal(h.isEjected(clock.now()), false);
});

Deno.test("PassiveHealth with failures 0 never ejects", () => {
  const h = new PassiveHealth();
  for (let i = 0; i < 50; i++) {
    assert.equal(h.failure(h.begin(), 1, { failures: 0, cooldown: 10 }), false);
  }
  assert.equal(h.isEjected(1), false);
  assert.equal(h.probation, false);
});

Deno.test("PassiveHealth a success of a member tried while ejected brings it back at once", () => {
  const clock = new ManualClock();
  const h = new PassiveHealth();
  fail(h, clock, 3);
  clock.advance(100);
  assert.equal(h.success(h.begin(), clock.now()), true);
  assert.equal(h.isEjected(clock.now()), false);
});

Deno.test("PassiveHealth a failure of a member tried while ejected leaves the ejection unchanged", () => {
  const clock = new ManualClock();
  const h = new PassiveHealth();
  fail(h, clock, 3);
  const [at, until, epoch] = [h.ejectedAt, h.ejectedUntil, h.epoch];
  clock.advance(4_000);
  assert.deepEqual(fail(h, clock, 2), [false, false]);
  assert.deepEqual([h.ejectedAt, h.ejectedUntil, h.epoch, h.failures], [at, until, epoch, 5]);
  // Its cooldown still ends on time; the next failure on probation ejects again.
  clock.advance(6_000);
  assert.deepEqual(fail(h, clock, 1), [true]);
});

Deno.test("pickLongestEjected picks the untried member ejected longest ago", () => {
  const clock = new ManualClock();
  const ms = ["a", "b", "c"].map((name) => ({ name, health: new PassiveHealth() }));
  for (const m of [ms[1], ms[0], ms[2]]) {
    fail(m.health, clock, 3);
    clock.advance(10);
  }
  assert.equal(pickLongestEjected(ms, null)?.name, "b");
  assert.equal(pickLongestEjected(ms, new Set([ms[1]]))?.name, "a");
  assert.equal(pickLongestEjected(ms, new Set(ms)), undefined);
  // A restored member is not an ejected one.
  ms[1].health.success(ms[1].health.begin(), clock.now());
  assert.equal(pickLongestEjected(ms, null)?.name, "a");
  assert.equal(pickLongestEjected([{ health: new PassiveHealth() }], null), undefined);
});
