import assert from "node:assert/strict";
import { invalidates, sameHostTarget } from "./invalidation.ts";

Deno.test("invalidates: unsafe methods with a non-error status", () => {
  assert.equal(invalidates("POST", 201), true);
  assert.equal(invalidates("DELETE", 204), true);
  assert.equal(invalidates("PUT", 302), true);
  assert.equal(invalidates("PATCH", 500), false);
  assert.equal(invalidates("POST", 404), false);
  assert.equal(invalidates("GET", 200), false);
});

Deno.test("sameHostTarget resolves Location on the same host only", () => {
  assert.equal(sameHostTarget("/b?x=1", "http://a.example/p"), "/b?x=1");
  assert.equal(sameHostTarget("http://a.example/c", "http://a.example/p"), "/c");
  assert.equal(sameHostTarget("http://evil.example/c", "http://a.example/p"), null);
  assert.equal(sameHostTarget("https://a.example/c", "http://a.example/p"), null);
  assert.equal(sameHostTarget("http://[bad", "http://a.example/p"), null);
});
