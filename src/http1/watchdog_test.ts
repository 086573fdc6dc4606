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
  assert.equal(w.due, 0);
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

Deno.test("Watchdog sets one timer for the earliest deadline and none with nothing armed", () => {
  let now = 0;
  const w = new Watchdog(10, () => now);
  const a = new Item();
  const b = new Item();
  const c = new Item();
  assert.equal(w.due, 0);
  w.arm(a, 60_000);
  assert.equal(w.due, 60_000);
  // An earlier deadline moves the timer; one within `tick` of it, or later, does not.
  w.arm(b, 1600);
  assert.equal(w.due, 1600);
  w.arm(c, 1595);
  assert.equal(w.due, 1600);
  w.arm(c, 30_000);
  assert.equal(w.due, 1600);
  // Fired with b disarmed: set again for the earliest deadline left, c's.
  w.disarm(b);
  now = 1600;
  w.sweep();
  assert.equal(w.due, 30_000);
  assert.equal(a.expired + b.expired + c.expired, 0);
  w.disarm(a);
  w.disarm(c);
  w.sweep();
  assert.equal(w.due, 0);
  assert.equal(w.armed, 0);
});

Deno.test("Watchdog: an item that arms itself again from expire() gets a timer", () => {
  let now = 0;
  const w = new Watchdog(10, () => now);
  const a = new Item();
  a.expire = () => {
    a.expired++;
    if (a.expired === 1) w.arm(a, 500);
  };
  w.arm(a, 100);
  now = 100;
  w.sweep();
  assert.equal(a.expired, 1);
  assert.equal(w.due, 600);
  now = 600;
  w.sweep();
  assert.equal(a.expired, 2);
  assert.equal(w.due, 0);
});

Deno.test("Watchdog fires a short deadline armed after a long one on time", async () => {
  const w = new Watchdog(5);
  const long = new Item();
  const short = new Item();
  w.arm(long, 60_000);
  const t0 = Date.now();
  w.arm(short, 30);
  const until = t0 + 2000;
  while (short.expired === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
  assert.equal(short.expired, 1);
  assert.ok(Date.now() - t0 < 1000, `fired after ${Date.now() - t0} ms`);
  assert.equal(long.expired, 0);
  w.disarm(long);
  w.sweep();
  assert.equal(w.due, 0);
});
