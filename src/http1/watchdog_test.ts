import assert from "node:assert/strict";
import { type Expirable, Watchdog } from "./watchdog.ts";

class Item implements Expirable {
  expiresAt = 0;
  expired = 0;
  expire(): void {
    this.expired++;
  }
}

Deno.test("Watchdog expires due items once and leaves others armed", () => {
  let now = 1000;
  const w = new Watchdog(10, () => now);
  const a = new Item();
  const b = new Item();
  w.arm(a, 100);
  w.arm(b, 500);
  assert.equal(a.expiresAt, 1100);
  now = 1099;
  w.sweep();
  assert.equal(a.expired, 0);
  now = 1100;
  w.sweep();
  w.sweep();
  assert.equal(a.expired, 1);
  assert.equal(b.expired, 0);
  assert.equal(w.armed, 1);
  w.disarm(b);
  now = 2000;
  w.sweep(); // nothing armed: stops its timer
  assert.equal(b.expired, 0);
  assert.equal(w.armed, 0);
});

Deno.test("Watchdog ignores timeouts of 0 or less", () => {
  const w = new Watchdog(10, () => 0);
  const a = new Item();
  w.arm(a, 0);
  w.arm(a, -5);
  assert.equal(w.armed, 0);
});

Deno.test("Watchdog fires from its own timer", async () => {
  const w = new Watchdog(5);
  const a = new Item();
  w.arm(a, 20);
  const until = Date.now() + 1000;
  while (a.expired === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
  assert.equal(a.expired, 1);
  await new Promise((r) => setTimeout(r, 15)); // lets the next tick stop the timer
  w.sweep();
});

Deno.test("Watchdog: a disarmed item never expires, and arming it again counts", () => {
  let now = 0;
  const w = new Watchdog(10, () => now);
  const a = new Item();
  w.arm(a, 10);
  w.disarm(a);
  assert.equal(w.armed, 0);
  now = 50;
  w.sweep();
  assert.equal(a.expired, 0);
  w.arm(a, 10);
  w.disarm(a);
  w.arm(a, 10);
  assert.equal(w.armed, 1);
  now = 60;
  w.sweep();
  assert.equal(a.expired, 1);
  assert.equal(w.armed, 0);
});

Deno.test("Watchdog checks every 1/16 of the shortest timeout armed, between tick and 1 s", () => {
  let now = 0;
  const w = new Watchdog(10, () => now);
  const a = new Item();
  const b = new Item();
  w.arm(a, 60_000);
  assert.equal(w.period, 1000);
  w.arm(b, 1600);
  assert.equal(w.period, 100);
  w.arm(b, 50);
  assert.equal(w.period, 10);
  // A longer timeout armed later does not slow the running timer down.
  w.arm(b, 60_000);
  assert.equal(w.period, 10);
  w.disarm(a);
  w.disarm(b);
  now = 10;
  w.sweep();
  w.sweep();
  assert.equal(w.period, 0);
});
