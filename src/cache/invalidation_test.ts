import assert from "node:assert/strict";
import { invalidates, sameHostTarget } from "./invalidation.ts";

Deno.test("invalidates: unsafe methods with a non-error status", () => {
  assert.equal(invalidates("POST", 201), true);
  assert.equal(invalidates("DELETE", 204), true);
  assert.equal(invalidates("PUT", 302), true);
  assert.equal(invalidates("PATCH", 500), false);
  assert.equal(invalidates("POST", 404), false);
  assert.equal(invalidates("GET", 200), false);
  assert.equal(invalidates("OPTIONS", 200), false);
  assert.equal(invalidates("PROPFIND", 207), false);
});

Deno.test("invalidates: a method of unknown safety counts as unsafe (RFC 9111 4.4)", () => {
  assert.equal(invalidates("M-SEARCH", 200), true);
  assert.equal(invalidates("PURGE", 204), true);
  assert.equal(invalidates("M-SEARCH", 503), false);
});

Deno.test("sameHostTarget resolves Location on the same host only", () => {
  assert.equal(sameHostTarget("/b?x=1", "http://a.example/p"), "/b?x=1");
  assert.equal(sameHostTarget("http://a.example/c", "http://a.example/p"), "/c");
  assert.equal(sameHostTarget("http://evil.example/c", "http://a.example/p"), null);
  assert.equal(sameHostTarget("https://a.example/c", "http://a.example/p"), null);
  assert.equal(sameHostTarget("http://[bad", "http://a.example/p"), null);
});
