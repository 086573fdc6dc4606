import assert from "node:assert/strict";
import {
  h2loadTimeMs,
  logTimesMs,
  parseH2load,
  percentile,
  sumH2load,
  withPercentiles,
} from "./h2load_output.ts";

// h2load 1.52.0 (Debian bookworm), HTTP/2 against nginx.
const H2 = `starting benchmark...
spawning thread #0: 2 total client(s). 20 total requests
TLS Protocol: TLSv1.3
Cipher: TLS_AES_128_GCM_SHA256
Server Temp Key: X25519 253 bits
Application protocol: h2
progress: 10% done
progress: 100% done

finished in 267.41ms, 74.79 req/s, 9.93KB/s
requests: 20 total, 20 started, 20 done, 20 succeeded, 0 failed, 0 errored, 0 timeout
status codes: 20 2xx, 0 3xx, 0 4xx, 0 5xx
traffic: 2.65KB (2718) total, 980B (980) headers (space savings 50.51%), 1.25KB (1280) data
                     min         max         mean         sd        +/- sd
time for request:      857us     18.28ms      9.03ms      5.01ms    70.00%
time for connect:   145.51ms    157.22ms    151.37ms      8.28ms   100.00%
time to 1st byte:   157.76ms    170.33ms    164.05ms      8.89ms   100.00%
req/s           :      39.33       41.67       40.50        1.66   100.00%
`;

// The same with --h1 and a failed run's shape (h1 counts no total traffic in 1.52.0).
const H1_ERRORS = `starting benchmark...
spawning thread #0: 4 total client(s). 40 total requests
TLS Protocol: TLSv1.3
Cipher: TLS_AES_256_GCM_SHA384
Server Temp Key: X25519 253 bits
Application protocol: http/1.1

finished in 1.50s, 24.00 req/s, 0B/s
requests: 40 total, 40 started, 36 done, 33 succeeded, 4 failed, 3 errored, 1 timeout
status codes: 30 2xx, 3 3xx, 2 4xx, 1 5xx
traffic: 0B (0) total, 2.03KB (2080) headers (space savings 0.00%), 2.25KB (2304) data
                     min         max         mean         sd        +/- sd
time for request:     4.13ms     31.43ms     15.89ms      7.52ms    75.00%
time for connect:    18.00ms     36.10ms     27.05ms     12.79ms   100.00%
time to 1st byte:      900us     44.26ms     39.82ms      6.28ms   100.00%
req/s           :      20.13       23.13       21.63        2.12   100.00%
`;

Deno.test("h2loadTimeMs converts each h2load unit to milliseconds", () => {
  assert.equal(h2loadTimeMs("857us"), 0.857);
  assert.equal(h2loadTimeMs("18.28ms"), 18.28);
  assert.equal(h2loadTimeMs("3.38s"), 3380);
  assert.ok(Number.isNaN(h2loadTimeMs("soon")));
});

Deno.test("parseH2load reads rate, counts, body bytes, means and the TLS facts", () => {
  const r = parseH2load(H2);
  assert.ok(Math.abs(r.seconds - 0.26741) < 1e-9);
  assert.deepEqual({ ...r, seconds: 0 }, {
    requestsPerSec: 74.79,
    p50Ms: NaN,
    p99Ms: NaN,
    requests: 20,
    seconds: 0,
    failed: 0,
    errored: 0,
    timeouts: 0,
    non2xx: 0,
    dataBytes: 1280,
    connectMeanMs: 151.37,
    ttfbMeanMs: 164.05,
    tlsProtocol: "TLSv1.3",
    cipher: "TLS_AES_128_GCM_SHA256",
    tempKey: "X25519 253 bits",
    alpn: "h2",
  });
});

Deno.test("parseH2load counts failures and answers outside 2xx/3xx", () => {
  const r = parseH2load(H1_ERRORS);
  assert.deepEqual(
    [r.requests, r.failed, r.errored, r.timeouts, r.non2xx, r.dataBytes, r.seconds, r.alpn],
    [36, 4, 3, 1, 3, 2304, 1.5, "http/1.1"],
  );
  assert.equal(r.ttfbMeanMs, 39.82);
});

Deno.test("parseH2load refuses output without its summary", () => {
  assert.throws(
    () => parseH2load("connect to 127.0.0.1:1 failed: Connection refused\n"),
    /No "finished in" or "requests:" line/,
  );
  assert.throws(() => parseH2load(H2.replace(/^requests:.*$/m, "")), /requests:/);
});

Deno.test("logTimesMs reads the log file, leaves failed requests out, refuses other lines", () => {
  const log = "1764600000000000\t200\t1500\n1764600000000100\t-1\t9\n1764600000000200\t503\t250\n";
  assert.deepEqual(logTimesMs(log), [1.5, 0.25]);
  assert.deepEqual(logTimesMs(""), []);
  assert.throws(() => logTimesMs("1\t200\n"), /Unexpected h2load log line/);
});

Deno.test("percentile takes the nearest rank; withPercentiles fills p50 and p99", () => {
  const v = Array.from({ length: 200 }, (_, i) => 200 - i); // 200 .. 1, unsorted
  assert.equal(percentile(v, 50), 100);
  assert.equal(percentile(v, 99), 198);
  assert.equal(percentile(v, 100), 200);
  assert.equal(percentile([7], 99), 7);
  assert.ok(Number.isNaN(percentile([], 99)));
  const r = withPercentiles(parseH2load(H2), [1, 2, 3, 4]);
  assert.deepEqual([r.p50Ms, r.p99Ms], [2, 4]);
});

Deno.test("sumH2load adds runs: counts, rate over summed time, request-weighted means", () => {
  const a = parseH2load(H2); // 20 requests in 0.26741 s
  const b = parseH2load(H1_ERRORS); // 36 requests in 1.5 s
  const s = sumH2load([a, b]);
  assert.equal(s.requests, 56);
  assert.equal(s.seconds, a.seconds + b.seconds);
  assert.equal(s.requestsPerSec, 56 / (a.seconds + b.seconds));
  assert.deepEqual([s.failed, s.errored, s.timeouts, s.non2xx], [4, 3, 1, 3]);
  assert.equal(s.dataBytes, 1280 + 2304);
  assert.ok(Math.abs(s.ttfbMeanMs - (164.05 * 20 + 39.82 * 36) / 56) < 1e-9);
  assert.throws(() => sumH2load([]), /at least one run/);
});
