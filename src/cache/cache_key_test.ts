import assert from "node:assert/strict";
import { cacheKey, hostOnly, keyHost } from "./cache_key.ts";

Deno.test("keyHost lower-cases and drops the scheme's default port", () => {
  assert.equal(keyHost("Example.COM:80", false), "example.com");
  assert.equal(keyHost("example.com:443", true), "example.com");
  assert.equal(keyHost("example.com:443", false), "example.com:443");
  assert.equal(keyHost("[::1]:80", false), "[::1]");
  assert.equal(keyHost("example.com:8080", false), "example.com:8080");
});

Deno.test("hostOnly strips the port", () => {
  assert.equal(hostOnly("example.com:8080"), "example.com");
  assert.equal(hostOnly("[::1]:8080"), "[::1]");
  assert.equal(hostOnly("example.com"), "example.com");
});

Deno.test("cacheKey joins scheme, host, path and query", () => {
  assert.equal(cacheKey(false, "a.example", "/x", "?q=1"), "http://a.example/x?q=1");
  assert.equal(cacheKey(true, "a.example", "/x", ""), "https://a.example/x");
});
