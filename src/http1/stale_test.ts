import assert from "node:assert/strict";
import { isIdempotent, mayResendStale } from "./stale.ts";

Deno.test("isIdempotent is true for GET HEAD OPTIONS PUT DELETE only", () => {
  for (const m of ["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]) assert.equal(isIdempotent(m), true);
  for (const m of ["POST", "PATCH", "CONNECT", "TRACE", "get"]) {
    assert.equal(isIdempotent(m), false);
  }
});

Deno.test("mayResendStale allows any method when nothing was written", () => {
  for (const m of ["GET", "POST", "PATCH"]) {
    assert.equal(mayResendStale(m, false, false, 0), true);
    assert.equal(mayResendStale(m, true, false, 0), true);
  }
});

Deno.test("mayResendStale after writing needs bodyless, idempotent and 1 s idle", () => {
  assert.equal(mayResendStale("GET", true, true, 1000), true);
  assert.equal(mayResendStale("DELETE", true, true, 5000), true);
  assert.equal(mayResendStale("GET", true, true, 999), false);
  assert.equal(mayResendStale("PUT", false, true, 5000), false);
  assert.equal(mayResendStale("POST", true, true, 5000), false);
  assert.equal(mayResendStale("PATCH", true, true, 5000), false);
  assert.equal(mayResendStale("POST", false, true, 5000), false);
});
