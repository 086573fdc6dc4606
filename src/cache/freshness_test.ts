import assert from "node:assert/strict";
import { parseCacheControl } from "./cache_control.ts";
import {
  clientRevalidates,
  currentAge,
  freshnessLifetime,
  heuristicLifetime,
  initialAge,
  inStaleWindow,
  parseAge,
} from "./freshness.ts";
import { formatHttpDate } from "./http_date.ts";
import { ManualClock } from "../base/clock.ts";

const D = Date.UTC(2026, 0, 1, 12, 0, 0);

Deno.test("freshnessLifetime: s-maxage wins over max-age, which wins over Expires", () => {
  const date = D;
  const exp = formatHttpDate(D + 300_000);
  assert.equal(freshnessLifetime(parseCacheControl("max-age=10, s-maxage=20"), exp, date), 20);
  assert.equal(freshnessLifetime(parseCacheControl("max-age=10"), exp, date), 10);
  assert.equal(freshnessLifetime(parseCacheControl(null), exp, date), 300);
});

Deno.test("freshnessLifetime: no explicit freshness is -1 (no heuristics)", () => {
  assert.equal(freshnessLifetime(parseCacheControl("public"), null, D), -1);
});

Deno.test("freshnessLifetime: an invalid or past Expires is already expired", () => {
  assert.equal(freshnessLifetime(parseCacheControl(null), "0", D), 0);
  assert.equal(freshnessLifetime(parseCacheControl(null), formatHttpDate(D - 5000), D), 0);
  assert.equal(freshnessLifetime(parseCacheControl(null), formatHttpDate(D + 5000), NaN), 0);
});

Deno.test("parseAge accepts digits only", () => {
  assert.equal(parseAge("30"), 30);
  assert.equal(parseAge(" 7 "), 7);
  assert.equal(parseAge("-3"), 0);
  assert.equal(parseAge("1.5"), 0);
  assert.equal(parseAge(null), 0);
});

Deno.test("parseAge takes the first member of a list (RFC 9111 5.1)", () => {
  assert.equal(parseAge("7200, 0"), 7200);
  assert.equal(parseAge("0, 7200"), 0);
  assert.equal(parseAge("7200,0"), 7200);
  assert.equal(parseAge("x, 7200"), 0);
});

Deno.test("inStaleWindow: an absent window (0) allows no staleness, not even 0 s", () => {
  assert.equal(inStaleWindow(0, 0), false);
  assert.equal(inStaleWindow(0, 5), true);
  assert.equal(inStaleWindow(5, 5), true);
  assert.equal(inStaleWindow(6, 5), false);
  assert.equal(inStaleWindow(-3, 5), true);
});

Deno.test("currentAge adds the member's Age, the response delay and the time in cache", () => {
  const clock = new ManualClock(D);
  const basis = { requestTime: D - 2000, responseTime: D, dateValue: D, ageValue: 10 };
  // corrected_age_value = 10 + 2 (delay); apparent age 0.
  assert.equal(initialAge(basis), 12);
  assert.equal(currentAge(basis, clock.now()), 12);
  clock.advance(5_500);
  assert.equal(currentAge(basis, clock.now()), 17);
});

Deno.test("currentAge uses the apparent age when the member's Date is older", () => {
  const basis = { requestTime: D, responseTime: D, dateValue: D - 40_000, ageValue: 0 };
  assert.equal(currentAge(basis, D), 40);
  const noDate = { requestTime: D, responseTime: D, dateValue: NaN, ageValue: 0 };
  assert.equal(currentAge(noDate, D + 1000), 1);
});

Deno.test("clientRevalidates: a fresh immutable answer serves a reload's max-age, not no-cache", () => {
  const reload = parseCacheControl("max-age=0");
  assert.equal(clientRevalidates(reload, 5, 55, false), true);
  assert.equal(clientRevalidates(reload, 5, 55, true), false);
  assert.equal(clientRevalidates(parseCacheControl("max-age=3"), 5, 55, true), false);
  assert.equal(clientRevalidates(parseCacheControl("no-cache"), 5, 55, true), true);
  assert.equal(clientRevalidates(parseCacheControl("min-fresh=60"), 5, 55, true), true);
  assert.equal(clientRevalidates(parseCacheControl(null), 5, 55, true), false);
});

Deno.test("clientRevalidates: a stale immutable answer is treated like any other", () => {
  const reload = parseCacheControl("max-age=0");
  assert.equal(clientRevalidates(reload, 61, -1, true), true);
  assert.equal(clientRevalidates(reload, 60, 0, true), true);
  assert.equal(clientRevalidates(parseCacheControl("max-age=100"), 61, -1, true), false);
});

Deno.test("heuristicLifetime: 10% of the time since Last-Modified, capped, listed statuses only", () => {
  const lm = formatHttpDate(D - 1_000_000);
  assert.equal(heuristicLifetime(200, lm, D, 86_400), 100);
  assert.equal(heuristicLifetime(410, lm, D, 86_400), 100);
  assert.equal(heuristicLifetime(200, lm, D, 30), 30);
  assert.equal(heuristicLifetime(200, formatHttpDate(D - 10_000_000_000), D, 86_400), 86_400);
  for (const s of [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]) {
    assert.equal(heuristicLifetime(s, lm, D, 86_400), 100, String(s));
  }
  for (const s of [201, 302, 307, 403, 500, 503]) {
    assert.equal(heuristicLifetime(s, lm, D, 86_400), -1, String(s));
  }
});

Deno.test("heuristicLifetime: off with max 0, and none without a usable Last-Modified", () => {
  const lm = formatHttpDate(D - 1_000_000);
  assert.equal(heuristicLifetime(200, lm, D, 0), -1);
  assert.equal(heuristicLifetime(200, null, D, 86_400), -1);
  assert.equal(heuristicLifetime(200, "yesterday", D, 86_400), -1);
  assert.equal(heuristicLifetime(200, formatHttpDate(D + 5000), D, 86_400), -1);
});
