import assert from "node:assert/strict";
import { checkPattern } from "./regex_safety.ts";

Deno.test("checkPattern accepts linear patterns and counts their groups", () => {
  assert.deepEqual(checkPattern("^/u/([0-9]+)$"), { groups: 1 });
  assert.deepEqual(checkPattern("^/(a|b)/(?:x|y)/(.*)$"), { groups: 2 });
  assert.deepEqual(checkPattern("^/(?<id>[a-z]{1,8})/?$"), { groups: 1 });
  assert.deepEqual(checkPattern("^/v[12]/[^/]+\\.json$"), { groups: 0 });
  assert.deepEqual(checkPattern("^(ab)+"), { groups: 1 });
  assert.deepEqual(checkPattern("^/(.*)/(.*)$"), { groups: 2 });
});

Deno.test("checkPattern refuses what can backtrack catastrophically", () => {
  const refused = (p: string, part: string) => {
    const r = checkPattern(p);
    assert.equal(typeof r, "string", p);
    assert.ok((r as string).includes(part), `${p}: ${r}`);
  };
  refused("^(a+)+$", "repeated group");
  refused("^(a*)*$", "repeated group");
  refused("^(a|aa)*$", "repeated group");
  refused("^(\\w+\\s?)*$", "repeated group");
  refused("^(x+x+)+y", "repeated group");
  refused("^(a)\\1$", "backreferences");
  refused("^(?<n>a)\\k<n>$", "backreferences");
  refused("^/(?=x)", "lookaround");
  refused("^/(?!x)", "lookaround");
  refused("^(?<=a)b", "lookaround");
  refused("(.*)/(.*)x", "anchored");
  refused("^a{1,1000}", "counted repeats");
  refused("^.*.*.*", "unbounded");
  refused("^" + "x".repeat(256), "longer than 256");
  refused("^(", "invalid regular expression");
  refused("", "empty");
});

Deno.test("a refused pattern is refused fast, an accepted one runs in linear time", () => {
  const ok = checkPattern("^/u/([0-9]+)$");
  assert.notEqual(typeof ok, "string");
  const re = new RegExp("^/u/([0-9]+)$");
  const t = performance.now();
  re.test("/u/" + "1".repeat(8000) + "x");
  assert.ok(performance.now() - t < 50);
});
