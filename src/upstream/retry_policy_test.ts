import assert from "node:assert/strict";
import { isIdempotent } from "../http1/stale.ts";
import { failureKind, mayRetry, type RetryInput } from "./retry_policy.ts";

const base: RetryInput = {
  attempts: 1,
  retries: 1,
  memberCount: 3,
  untriedExists: true,
  sentToClient: false,
  method: "GET",
  failure: "status",
  bodyReplayable: true,
  websocket: false,
};

Deno.test("isIdempotent is true for GET, HEAD, OPTIONS, PUT and DELETE only", () => {
  for (const m of ["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]) {
    assert.equal(isIdempotent(m), true, m);
  }
  for (const m of ["POST", "PATCH", "CONNECT", "TRACE", "get", "PROPFIND"]) {
    assert.equal(isIdempotent(m), false, m);
  }
});

Deno.test("mayRetry retries connect failures for any method", () => {
  for (const method of ["GET", "POST", "PATCH"]) {
    assert.equal(mayRetry({ ...base, method, failure: "connect" }), true, method);
  }
});

Deno.test("mayRetry retries 502/503/504, timeouts and breaks before the head only for idempotent methods", () => {
  for (const failure of ["status", "timeout", "broken_before_head"] as const) {
    for (const method of ["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]) {
      assert.equal(mayRetry({ ...base, method, failure }), true, `${method} ${failure}`);
    }
    for (const method of ["POST", "PATCH"]) {
      assert.equal(mayRetry({ ...base, method, failure }), false, `${method} ${failure}`);
    }
  }
});

Deno.test("mayRetry never retries after the head, after data reached the client, or for WebSocket", () => {
  assert.equal(mayRetry({ ...base, failure: "broken_after_head" }), false);
  assert.equal(mayRetry({ ...base, sentToClient: true }), false);
  assert.equal(mayRetry({ ...base, sentToClient: true, failure: "connect" }), false);
  assert.equal(mayRetry({ ...base, websocket: true, failure: "connect" }), false);
});

Deno.test("mayRetry needs several members, an untried one, retries left and a replayable body", () => {
  assert.equal(mayRetry({ ...base, memberCount: 1, failure: "connect" }), false);
  assert.equal(mayRetry({ ...base, untriedExists: false }), false);
  assert.equal(mayRetry({ ...base, retries: 0, failure: "connect" }), false);
  assert.equal(mayRetry({ ...base, attempts: 2, retries: 1 }), false);
  assert.equal(mayRetry({ ...base, attempts: 2, retries: 2 }), true);
  assert.equal(mayRetry({ ...base, attempts: 6, retries: 5 }), false);
  assert.equal(mayRetry({ ...base, bodyReplayable: false }), false);
  assert.equal(mayRetry({ ...base, bodyReplayable: false, failure: "connect" }), false);
});

Deno.test("failureKind names where an exchange with a member failed", () => {
  const e = (phase: "connect" | "write" | "head" | "body", written: boolean, timeout = false) => ({
    phase,
    written,
    timeout,
  });
  assert.equal(failureKind(e("connect", false, true)), "connect");
  assert.equal(failureKind(e("write", false)), "connect");
  assert.equal(failureKind(e("write", true)), "broken_before_head");
  assert.equal(failureKind(e("head", true, true)), "timeout");
  assert.equal(failureKind(e("head", true)), "broken_before_head");
  assert.equal(failureKind(e("body", true)), "broken_after_head");
});
