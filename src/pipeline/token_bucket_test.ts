import assert from "node:assert/strict";
import { TokenBucket } from "./token_bucket.ts";

Deno.test("TokenBucket lets a full bucket's burst through, then one request per refill", () => {
  // 2 tokens, 1 per 100 ms.
  const b = new TokenBucket(2, 0);
  assert.equal(b.take(0, 2, 0.01), 0);
  assert.equal(b.take(0, 2, 0.01), 0);
  assert.equal(b.take(0, 2, 0.01), 100);
  assert.equal(b.take(40, 2, 0.01), 60);
  assert.equal(b.take(100, 2, 0.01), 0);
  assert.equal(b.take(100, 2, 0.01), 100);
});

Deno.test("TokenBucket refills no further than its capacity", () => {
  const b = new TokenBucket(3, 0);
  for (let i = 0; i < 3; i++) assert.equal(b.take(0, 3, 0.001), 0);
  // An hour later it holds 3 tokens, not 3600.
  for (let i = 0; i < 3; i++) assert.equal(b.take(3_600_000, 3, 0.001), 0);
  assert.equal(b.take(3_600_000, 3, 0.001), 1000);
});

Deno.test("TokenBucket ignores a clock that goes backwards", () => {
  // 1 token per 4 ms.
  const b = new TokenBucket(1, 1000);
  assert.equal(b.take(1000, 1, 0.25), 0);
  assert.equal(b.take(500, 1, 0.25), 4);
  assert.equal(b.take(1003, 1, 0.25), 1);
  assert.equal(b.take(1004, 1, 0.25), 0);
});

Deno.test("TokenBucket.fullAt tells when a bucket may be forgotten", () => {
  const b = new TokenBucket(2, 0);
  b.take(0, 2, 0.01);
  assert.equal(b.fullAt(50, 2, 0.01), false);
  assert.equal(b.fullAt(100, 2, 0.01), true);
});
