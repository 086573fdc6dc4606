import assert from "node:assert/strict";
import { bucketsOf, parseExposition, quantileBetween, sumOf } from "./exposition.ts";

const TEXT = `# HELP scalws_inflight_requests Client requests in flight.
# TYPE scalws_inflight_requests gauge
scalws_inflight_requests 7
process_cpu_seconds_total 12.5
scalws_event_loop_lag_p99_seconds 0.0021
scalws_http_requests_total{tenant="a",app="b",class="2xx"} 10
scalws_http_requests_total{tenant="a",app="c",class="2xx"} 5
scalws_http_request_duration_seconds_bucket{tenant="a",app="b",le="0.01"} 4
scalws_http_request_duration_seconds_bucket{tenant="a",app="b",le="0.1"} 9
scalws_http_request_duration_seconds_bucket{tenant="a",app="b",le="+Inf"} 10
scalws_http_request_duration_seconds_bucket{tenant="a",app="c",le="0.01"} 5
scalws_http_request_duration_seconds_bucket{tenant="a",app="c",le="0.1"} 5
scalws_http_request_duration_seconds_bucket{tenant="a",app="c",le="+Inf"} 5
scalws_http_request_duration_seconds_sum{tenant="a",app="b"} 0.5
broken line without value
`;

Deno.test("parseExposition and sumOf read plain and labelled samples", () => {
  const s = parseExposition(TEXT);
  assert.equal(sumOf(s, "scalws_inflight_requests"), 7);
  assert.equal(sumOf(s, "process_cpu_seconds_total"), 12.5);
  assert.equal(sumOf(s, "scalws_event_loop_lag_p99_seconds"), 0.0021);
  assert.equal(sumOf(s, "scalws_http_requests_total"), 15);
  assert.equal(sumOf(s, "scalws_missing"), undefined);
});

Deno.test("bucketsOf sums buckets over label sets", () => {
  const b = bucketsOf(parseExposition(TEXT), "scalws_http_request_duration_seconds");
  assert.deepEqual([...b], [[0.01, 9], [0.1, 14], [Infinity, 15]]);
});

Deno.test("quantileBetween interpolates within the bucket of the rank, over the delta", () => {
  const before = new Map([[0.01, 9], [0.1, 14], [Infinity, 15]]);
  const after = new Map([[0.01, 9], [0.1, 24], [Infinity, 25]]);
  // 10 new observations, all in (0.01, 0.1]: p50 is half-way through that bucket.
  assert.ok(Math.abs(quantileBetween(0.5, before, after)! - 0.055) < 1e-12);
  assert.equal(quantileBetween(0.5, before, before), undefined);
  // From nothing: 9 of 15 at or under 0.01, so p50 (rank 7.5) is inside the first bucket.
  assert.equal(quantileBetween(0.5, new Map(), before), 0.01 * (7.5 / 9));
  // p99 of 15 (rank 14.85) falls in +Inf: the highest finite bound is the answer.
  assert.equal(quantileBetween(0.99, new Map(), before), 0.1);
});
