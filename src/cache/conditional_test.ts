import assert from "node:assert/strict";
import { noneMatchMatches, notModified } from "./conditional.ts";
import { formatHttpDate } from "./http_date.ts";

Deno.test("noneMatchMatches uses the weak comparison over a list", () => {
  assert.equal(noneMatchMatches('"a", W/"b"', 'W/"b"'), true);
  assert.equal(noneMatchMatches('W/"b"', '"b"'), true);
  assert.equal(noneMatchMatches('"a"', '"b"'), false);
  assert.equal(noneMatchMatches("*", '"b"'), true);
  assert.equal(noneMatchMatches("*", null), false);
  assert.equal(noneMatchMatches("a", "a"), false);
});

Deno.test("notModified: If-None-Match wins over If-Modified-Since", () => {
  const lm = formatHttpDate(Date.UTC(2026, 0, 1));
  const later = formatHttpDate(Date.UTC(2026, 0, 2));
  assert.equal(notModified({ ifNoneMatch: '"x"', ifModifiedSince: later }, '"y"', lm, NaN), false);
  assert.equal(notModified({ ifNoneMatch: null, ifModifiedSince: later }, '"y"', lm, NaN), true);
  assert.equal(notModified({ ifNoneMatch: null, ifModifiedSince: lm }, null, later, NaN), false);
  assert.equal(notModified({ ifNoneMatch: null, ifModifiedSince: "junk" }, null, lm, NaN), false);
  assert.equal(notModified({ ifNoneMatch: null, ifModifiedSince: null }, '"y"', lm, NaN), false);
});
