import assert from "node:assert/strict";
import { POLL_MAX, POLL_MIN, pollDelay } from "./poll.ts";

Deno.test("pollDelay: Retry-After in seconds, bounded", () => {
  assert.equal(pollDelay("2", 0, 0), 2000);
  assert.equal(pollDelay("0", 0, 0), POLL_MIN);
  assert.equal(pollDelay("3600", 0, 0), POLL_MAX);
});

Deno.test("pollDelay: Retry-After as an HTTP date, bounded", () => {
  const now = Date.UTC(2026, 11, 1, 12, 0, 0);
  assert.equal(pollDelay("Tue, 01 Dec 2026 12:00:03 GMT", now, 0), 3000);
  assert.equal(pollDelay("Tue, 01 Dec 2026 11:00:00 GMT", now, 0), POLL_MIN);
  assert.equal(pollDelay("Wed, 02 Dec 2026 12:00:00 GMT", now, 0), POLL_MAX);
});

Deno.test("pollDelay: without a usable Retry-After, 250 ms doubling to 4 s", () => {
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 40].map((a) => pollDelay(null, 0, a)),
    [250, 500, 1000, 2000, 4000, 4000, 4000],
  );
  assert.equal(pollDelay("soon", 0, 1), 500);
  assert.equal(pollDelay("-5", 0, 0), 250);
});
