import assert from "node:assert/strict";
import { RegexRewrite, replacePrefix, rewritePolicy, stripPrefix } from "./rewrite.ts";
import { testExchange } from "./_test_exchange.ts";

Deno.test("stripPrefix and replacePrefix are segment-aligned", () => {
  assert.equal(stripPrefix("/api/x", "/api"), "/x");
  assert.equal(stripPrefix("/api", "/api"), "/");
  assert.equal(stripPrefix("/apix", "/api"), "/apix");
  assert.equal(replacePrefix("/old/a", "/old", "/new"), "/new/a");
  assert.equal(replacePrefix("/old", "/old", "/"), "/");
  assert.equal(replacePrefix("/oldies", "/old", "/new"), "/oldies");
  assert.equal(replacePrefix("/a", "/", "/base"), "/base/a");
});

Deno.test("RegexRewrite fills groups; the policy normalises and never climbs above /", () => {
  const rx = new RegexRewrite("^/u/([0-9]+)/(.*)$", "/users/$1/$2");
  assert.equal(rx.apply("/u/7/x"), "/users/7/x");
  assert.equal(rx.apply("/v/7/x"), null);
  const p = rewritePolicy({ policy: "rewrite", regex: { match: "^/c/(.*)$", to: "/b/$1" } });
  const ex = testExchange("/c/../../../../etc");
  assert.equal(p.request!(ex), null);
  assert.equal(ex.path, "/etc");
  const long = testExchange("/c/" + "a".repeat(2000));
  assert.equal((p.request!(long) as Response).status, 414);
});
