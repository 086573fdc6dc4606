import assert from "node:assert/strict";
import { joinQuery, RegexRewrite, replacePrefix, rewritePolicy, stripPrefix } from "./rewrite.ts";
import { testExchange } from "../../../tests/_support/test_exchange.ts";

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

Deno.test("rewrite regex with ?: the target sets the query, the request's follows after &", () => {
  const run = (to: string, target: string) => {
    const p = rewritePolicy({ policy: "rewrite", regex: { match: "^/wiki/(.*)$", to } });
    const ex = testExchange(target);
    assert.equal(p.request!(ex), null);
    return ex.path + ex.query;
  };
  assert.equal(run("/doku.php?id=$1", "/wiki/start?do=edit"), "/doku.php?id=start&do=edit");
  assert.equal(run("/doku.php?id=$1", "/wiki/start"), "/doku.php?id=start");
  assert.equal(run("/doku.php?id=$1", "/wiki/start?"), "/doku.php?id=start");
  // A target ending with ? drops the request's query (nginx's rule).
  assert.equal(run("/doku.php?id=$1?", "/wiki/start?do=edit"), "/doku.php?id=start");
  assert.equal(run("/doku.php?", "/wiki/start?do=edit"), "/doku.php");
  // No ? in the target: the query is kept as it was.
  assert.equal(run("/doku.php/$1", "/wiki/a/b?do=edit"), "/doku.php/a/b?do=edit");
  // Several arguments, and captures that would split an argument are escaped.
  assert.equal(run("/i.php?a=1&p=$1", "/wiki/x&y+z?b=2"), "/i.php?a=1&p=x%26y%2Bz&b=2");
  // The path part is normalised, the query part is not.
  assert.equal(run("/a/../i.php?x=../$1", "/wiki/a?q"), "/i.php?x=../a&q");
  const rx = new RegexRewrite("^/p/(.*)$", "/index.php?page=$1");
  assert.equal(rx.apply("/p/a&b"), "/index.php?page=a%26b");
  assert.equal(rx.apply("/q/a"), null);
});

Deno.test("joinQuery joins the target's arguments and the request's", () => {
  assert.equal(joinQuery("id=1", ""), "?id=1");
  assert.equal(joinQuery("id=1", "?"), "?id=1");
  assert.equal(joinQuery("id=1", "?a=2"), "?id=1&a=2");
  assert.equal(joinQuery("", "?a=2"), "?a=2");
  assert.equal(joinQuery("", ""), "");
});
