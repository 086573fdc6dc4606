import assert from "node:assert/strict";
import { parseWrk, wrkTimeMs } from "./wrk_output.ts";

const FULL = `Running 5s test @ http://127.0.0.1:8080/
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.23ms  456.00us  12.34ms   89.00%
    Req/Sec    25.00k     1.00k   27.00k    80.00%
  Latency Distribution
     50%  812.00us
     75%    1.30ms
     90%    1.60ms
     99%    3.20ms
  250123 requests in 5.00s, 40.00MB read
  Socket errors: connect 1, read 2, write 3, timeout 4
  Non-2xx or 3xx responses: 12
Requests/sec:  50024.60
Transfer/sec:      8.00MB
`;

Deno.test("wrkTimeMs converts each wrk unit to milliseconds", () => {
  assert.equal(wrkTimeMs("812.00us"), 0.812);
  assert.equal(wrkTimeMs("3.20ms"), 3.2);
  assert.equal(wrkTimeMs("2.00s"), 2000);
  assert.equal(wrkTimeMs("1.50m"), 90_000);
  assert.ok(Number.isNaN(wrkTimeMs("fast")));
});

Deno.test("parseWrk reads rate, percentiles, totals and errors", () => {
  assert.deepEqual(parseWrk(FULL), {
    requestsPerSec: 50024.6,
    p50Ms: 0.812,
    p99Ms: 3.2,
    requests: 250123,
    seconds: 5,
    non2xx: 12,
    connectErrors: 1,
    readErrors: 2,
    writeErrors: 3,
    timeouts: 4,
    transferPerSec: "8.00MB",
  });
});

Deno.test("parseWrk counts missing error lines as zero", () => {
  const clean = FULL.replace(/^\s+Socket errors.*\n/m, "").replace(/^\s+Non-2xx.*\n/m, "");
  const r = parseWrk(clean);
  assert.equal(r.non2xx, 0);
  assert.equal(r.connectErrors + r.readErrors + r.writeErrors + r.timeouts, 0);
});

Deno.test("parseWrk refuses output without a rate", () => {
  assert.throws(
    () => parseWrk("unable to connect to 127.0.0.1:1 Connection refused"),
    /No Requests\/sec line/,
  );
});
