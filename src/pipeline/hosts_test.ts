import assert from "node:assert/strict";
import { hostName, HostTable } from "./hosts.ts";

Deno.test("HostTable matches exact names before single-label wildcards", () => {
  const t = new HostTable<string>();
  t.add("example.com", "apex");
  t.add("*.example.com", "wild");
  t.add("api.example.com", "api");
  assert.equal(t.lookup("example.com"), "apex");
  assert.equal(t.lookup("api.example.com"), "api");
  assert.equal(t.lookup("www.example.com"), "wild");
  assert.equal(t.lookup("a.b.example.com"), undefined);
  assert.equal(t.lookup("other.org"), undefined);
});

Deno.test("HostTable answers unknown hosts with the fallback", () => {
  const t = new HostTable<string>("default");
  t.add("example.com", "apex");
  assert.equal(t.lookup("nope.test"), "default");
});

Deno.test("hostName strips the port and lower-cases", () => {
  assert.equal(hostName("Example.COM:8080"), "example.com");
  assert.equal(hostName("example.com"), "example.com");
  assert.equal(hostName("example.com."), "example.com");
  assert.equal(hostName("[::1]:80"), "[::1]");
  assert.equal(hostName("[::1"), "");
  assert.equal(hostName("a b"), "");
  assert.equal(hostName(""), "");
});

Deno.test("HostTable matches **. wildcards at any depth, the longest suffix first, last", () => {
  const t = new HostTable<string>("fallback");
  t.add("**.example.com", "deep");
  t.add("**.b.example.com", "deeper");
  t.add("*.example.com", "one");
  t.add("x.b.example.com", "exact");
  assert.equal(t.lookup("a.example.com"), "one");
  assert.equal(t.lookup("a.c.example.com"), "deep");
  assert.equal(t.lookup("a.b.example.com"), "deeper");
  assert.equal(t.lookup("a.a.b.example.com"), "deeper");
  assert.equal(t.lookup("x.b.example.com"), "exact");
  assert.equal(t.lookup("example.com"), "fallback");
  assert.equal(t.lookup("b.example.com"), "one");
});

Deno.test("hostName refuses what is no host: other bytes, a port that is not digits", () => {
  for (
    const bad of [
      "a.test?x",
      "a.test#x",
      "a.test/x",
      "A.test/x",
      "u@a.test",
      "U@a.test",
      "a.test:abc",
      "a.test:80x",
      ":80",
      "[]",
      "[::1]x",
      "[::g]",
      "a.test\\x",
      "é.test",
    ]
  ) assert.equal(hostName(bad), "", bad);
  assert.equal(hostName("A_b-1.Test:"), "a_b-1.test");
  assert.equal(hostName("[::FFFF:127.0.0.1]:8080"), "[::ffff:127.0.0.1]");
  assert.equal(hostName("127.0.0.1:65535"), "127.0.0.1");
});
