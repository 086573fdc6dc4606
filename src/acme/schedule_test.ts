import assert from "node:assert/strict";
import { seeded } from "../base/random.ts";
import { renewalTime, RETRY_AFTER_MAX, retryAfterMs, retryDelay } from "./schedule.ts";

const DAY = 86_400_000;

Deno.test("renewalTime: two thirds of the lifetime, jitter of up to 5% earlier", () => {
  assert.equal(renewalTime(0, 90 * DAY, () => 0), 60 * DAY);
  assert.equal(renewalTime(0, 90 * DAY, () => 0.999999999), 60 * DAY - 4.5 * DAY * 0.999999999);
  assert.equal(renewalTime(1000, 1000 + 6000, () => 0.5), 1000 + 4000 - 150);
  const r = seeded(7);
  for (let i = 0; i < 1000; i++) {
    const t = renewalTime(0, 90 * DAY, r);
    assert.ok(t > 55.5 * DAY && t <= 60 * DAY, String(t));
  }
  // A certificate whose dates are upside down renews now.
  assert.equal(renewalTime(5000, 1000, () => 0.5), 5000);
});

Deno.test("retryDelay: 1 min doubling to 1 h, +-10%", () => {
  const mid = () => 0.5;
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 7, 8, 100].map((f) => retryDelay(f, mid)),
    [60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000, 3_600_000, 3_600_000, 3_600_000],
  );
  assert.equal(retryDelay(1, () => 0), 54_000);
  assert.equal(retryDelay(1, () => 0.999999), 66_000);
  assert.equal(retryDelay(0, mid), 60_000);
});

Deno.test("retryAfterMs: seconds or an HTTP date, at most a day, 0 when unusable", () => {
  const now = Date.UTC(2026, 11, 1, 12, 0, 0);
  assert.equal(retryAfterMs("3600", now), 3_600_000);
  assert.equal(retryAfterMs("Tue, 01 Dec 2026 13:00:00 GMT", now), 3_600_000);
  assert.equal(retryAfterMs("Tue, 01 Dec 2026 11:00:00 GMT", now), 0);
  assert.equal(retryAfterMs("999999999", now), RETRY_AFTER_MAX);
  assert.equal(retryAfterMs(null, now), 0);
  assert.equal(retryAfterMs("soon", now), 0);
  assert.equal(retryAfterMs("-1", now), 0);
});
