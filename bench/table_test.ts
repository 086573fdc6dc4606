import assert from "node:assert/strict";
import { markUnfair, ratioToNginx, renderTable, type Row } from "./table.ts";

const ROWS: Row[] = [
  {
    scenario: "get-64",
    server: "scalwsd",
    requestsPerSec: 30000,
    p99Ms: 4.5,
    errors: 0,
    cpuUsPerReq: 33.25,
    cpuPct: 99.8,
    userUsPerReq: 20.4,
    sysUsPerReq: 12.85,
    upstreamConnsPer1k: 0.04,
  },
  { scenario: "get-64", server: "nginx", requestsPerSec: 40000, p99Ms: 3.25, errors: 0 },
  { scenario: "pool-1", server: "scalwsd", requestsPerSec: 29000.4, p99Ms: 12.34, errors: 7 },
];

Deno.test("ratioToNginx divides by nginx's rate in the same scenario", () => {
  assert.equal(ratioToNginx(ROWS, ROWS[0]), 0.75);
  assert.equal(ratioToNginx(ROWS, ROWS[1]), 1);
  assert.ok(Number.isNaN(ratioToNginx(ROWS, ROWS[2])));
});

Deno.test("renderTable aligns columns and shows ratio and errors", () => {
  assert.equal(
    renderTable(ROWS),
    [
      "scenario  server    req/s      p99  vs nginx  cpu us/req  usr+sys  cpu %  member conns/1k  errors",
      "--------  -------  ------  -------  --------  ----------  -------  -----  ---------------  ------",
      "get-64    scalwsd  30,000  4.50 ms     0.75x        33.3    20+13    100              0.0       -",
      "get-64    nginx    40,000  3.25 ms     1.00x           -        -      -                -       -",
      "pool-1    scalwsd  29,000  12.3 ms         -           -        -      -                -       7",
    ].join("\n"),
  );
});

Deno.test("markUnfair marks every row of a keep-alive scenario where a proxy reopened", () => {
  const rows: Row[] = [
    { scenario: "get-64", server: "scalwsd", requestsPerSec: 3, p99Ms: 1, errors: 0 },
    { ...ROWS[1], upstreamConnsPer1k: 5.1 },
    { scenario: "close-64", server: "nginx", requestsPerSec: 2, p99Ms: 1, errors: 0 },
    { scenario: "close-64", server: "scalwsd", requestsPerSec: 1, p99Ms: 1, errors: 0 },
    { scenario: "pool-rr", server: "nginx", requestsPerSec: 2, p99Ms: 1, errors: 0 },
    { scenario: "pool-rr", server: "haproxy", requestsPerSec: 1, p99Ms: 1, errors: 0 },
    { scenario: "pool-rr", server: "floor", requestsPerSec: 1, p99Ms: 1, errors: 0 },
  ];
  rows[2].upstreamConnsPer1k = 1000;
  rows[5].upstreamConnsPer1k = 5;
  rows[6].upstreamConnsPer1k = 500;
  const marked = markUnfair(rows, (s) => s !== "close-64", 5);
  assert.deepEqual(marked.map((r) => r.unfair === true), [
    true,
    true,
    false,
    false,
    false,
    false,
    false,
  ]);
  assert.ok(Number.isNaN(ratioToNginx(marked, marked[0])));
  assert.equal(ratioToNginx(marked, marked[3]), 0.5);
  assert.match(renderTable(marked).split("\n")[2], /^get-64 +scalwsd +3 +1\.00 ms +unfair /);
});
