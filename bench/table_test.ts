import assert from "node:assert/strict";
import { ratioToNginx, renderTable, type Row } from "./table.ts";

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
      "scenario  server    req/s      p99  vs nginx  cpu us/req  usr+sys  cpu %  conns/1k  errors",
      "--------  -------  ------  -------  --------  ----------  -------  -----  --------  ------",
      "get-64    scalwsd  30,000  4.50 ms     0.75x        33.3    20+13    100       0.0       -",
      "get-64    nginx    40,000  3.25 ms     1.00x           -        -      -         -       -",
      "pool-1    scalwsd  29,000  12.3 ms         -           -        -      -         -       7",
    ].join("\n"),
  );
});
