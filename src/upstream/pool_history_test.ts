import assert from "node:assert/strict";
import { latencyBucket, latencyBuckets, p99, PoolHistory } from "./pool_history.ts";

Deno.test("latencyBucket and p99 read bucket bounds", () => {
  assert.equal(latencyBucket(0.3), 0);
  assert.equal(latencyBucket(1), 0);
  assert.equal(latencyBucket(1.5), 1);
  assert.equal(latencyBucket(99_999), 14);
  const b = latencyBuckets();
  b[latencyBucket(3)] += 98;
  b[latencyBucket(150)] += 2;
  assert.equal(p99(b), 200);
  assert.equal(p99(latencyBuckets()), null);
  b[14] += 1000;
  assert.equal(p99(b), 60_000);
});

Deno.test("PoolHistory samples rates and p99 per member, bounded, and keeps events bounded", () => {
  const h = new PoolHistory(3, 2);
  const lat = latencyBuckets();
  const m = { address: "a:1", attempts: 0, latency: lat };
  h.sample(1_000, [m]);
  assert.equal(h.samples.length, 0, "the first sample only sets the base");
  m.attempts = 50;
  lat[latencyBucket(12)] += 50;
  h.sample(11_000, [m]);
  assert.deepEqual(h.samples, [{ t: 11_000, members: { "a:1": { rps: 5, p99_ms: 20 } } }]);
  h.sample(21_000, [m, { address: "b:1", attempts: 7, latency: latencyBuckets() }]);
  assert.deepEqual(h.samples[1].members, { "a:1": { rps: 0, p99_ms: null } });
  for (let t = 31_000; t <= 61_000; t += 10_000) h.sample(t, []);
  assert.equal(h.samples.length, 3);
  assert.equal(h.samples[2].t, 61_000);
  h.event(1, "added", "a:1");
  h.event(2, "ejected", "a:1");
  h.event(3, "restored", "a:1");
  assert.deepEqual(h.events.map((e) => e.kind), ["ejected", "restored"]);
});
