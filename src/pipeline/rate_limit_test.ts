import assert from "node:assert/strict";
import { ManualClock } from "../base/clock.ts";
import { LimiterRegistry, RateLimiter } from "./rate_limit.ts";

Deno.test("RateLimiter keeps one bucket per client and answers Retry-After seconds", () => {
  const clock = new ManualClock(0);
  const l = new RateLimiter({ rate: 2, burst: 1 }, clock);
  // burst 1: two at once, then one every 500 ms.
  assert.deepEqual([l.take("a"), l.take("a"), l.take("a")], [0, 0, 1]);
  assert.equal(l.take("b"), 0, "another client has its own bucket");
  clock.advance(499);
  assert.equal(l.take("a"), 1);
  clock.advance(1);
  assert.equal(l.take("a"), 0);
  assert.equal(l.take("a"), 1);
});

Deno.test("RateLimiter rounds the wait up to whole seconds", () => {
  const clock = new ManualClock(0);
  const l = new RateLimiter({ rate: 1 / 60, burst: 0 }, clock); // 1r/m
  assert.equal(l.take("a"), 0);
  assert.equal(l.take("a"), 60);
  clock.advance(59_001);
  assert.equal(l.take("a"), 1);
});

Deno.test("RateLimiter forgets full buckets and caps the clients it tracks", () => {
  const clock = new ManualClock(0);
  const l = new RateLimiter({ rate: 1, burst: 0 }, clock, 10);
  for (let i = 0; i < 20; i++) l.take(`c${i}`);
  assert.equal(l.size, 20);
  clock.advance(1000);
  l.sweep(clock.now());
  assert.equal(l.size, 0, "refilled buckets are dropped");
  for (let i = 0; i < 20; i++) l.take(`d${i}`);
  l.sweep(clock.now());
  assert.equal(l.size, 9, "the oldest go beyond maxClients");
  assert.equal(l.take("d19"), 1, "the newest are kept");
});

Deno.test("LimiterRegistry keeps a limiter across generations only while its definition holds", () => {
  const reg = new LimiterRegistry(new ManualClock(0));
  const a = reg.get("server", { rate: 1, burst: 0 });
  assert.equal(reg.get("server", { rate: 1, burst: 0 }), a);
  assert.notEqual(reg.get("server", { rate: 1, burst: 1 }), a);
  assert.notEqual(reg.get("acme/www", { rate: 1, burst: 0 }), a);
});
