/**
 * What one h2load run measured (nghttp2's load generator, Debian's `nghttp2-client`), parsed
 * from its text output, plus the latency percentiles of its `--log-file`. h2load prints no
 * percentiles itself, only min/max/mean of the request times.
 */

/** One h2load run, in the shape of a wrk run (see wrk_output.ts) plus what only h2load says. */
export interface H2loadResult {
  requestsPerSec: number;
  /** Percentiles of the request times (submitted to answered) in ms, from the log file. */
  p50Ms: number;
  p99Ms: number;
  /** Requests done, and the seconds the run took. */
  requests: number;
  seconds: number;
  /** Requests that failed or errored, and answers outside 2xx and 3xx. */
  failed: number;
  errored: number;
  timeouts: number;
  non2xx: number;
  /** Bytes of response bodies (the `data` figure of `traffic`). */
  dataBytes: number;
  /** Mean time from connect start to the end of the handshake, and to the first byte (ms). */
  connectMeanMs: number;
  ttfbMeanMs: number;
  /** `TLS Protocol`, `Cipher`, `Server Temp Key`, `Application protocol`; "" when absent. */
  tlsProtocol: string;
  cipher: string;
  tempKey: string;
  alpn: string;
}

const UNITS: Record<string, number> = { us: 0.001, ms: 1, s: 1000 };

/** Milliseconds of an h2load time such as `857us`, `18.28ms`, `3.38s`; NaN when malformed. */
export function h2loadTimeMs(text: string): number {
  const m = /^([0-9.]+)(us|ms|s)$/.exec(text.trim());
  return m === null ? NaN : Number(m[1]) * UNITS[m[2]];
}

function field(text: string, name: string): string {
  const m = new RegExp(`^${name}: (.+)$`, "m").exec(text);
  return m === null ? "" : m[1].trim();
}

/** The mean column of one of h2load's `time for ...` lines, in ms; NaN when absent. */
function mean(text: string, label: string): number {
  const m = new RegExp(`^${label}:\\s+(\\S+)\\s+(\\S+)\\s+(\\S+)`, "m").exec(text);
  return m === null ? NaN : h2loadTimeMs(m[3]);
}

/**
 * Parses h2load's report; throws when the `finished in` or `requests:` line is missing. The
 * percentiles are NaN here: `withPercentiles` adds them from the log file.
 */
export function parseH2load(text: string): H2loadResult {
  const fin = /^finished in ([0-9.]+(?:us|ms|s)), ([0-9.]+) req\/s/m.exec(text);
  const req =
    /^requests: \d+ total, \d+ started, (\d+) done, \d+ succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/m
      .exec(text);
  if (fin === null || req === null) {
    throw new Error(`No "finished in" or "requests:" line in h2load output: ${text.slice(0, 300)}`);
  }
  const codes = /^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/m.exec(text);
  const data = /^traffic: .*, \S+ \((\d+)\) data$/m.exec(text);
  const done = Number(req[1]);
  const ok = codes === null ? done : Number(codes[1]) + Number(codes[2]);
  return {
    requestsPerSec: Number(fin[2]),
    p50Ms: NaN,
    p99Ms: NaN,
    requests: done,
    seconds: h2loadTimeMs(fin[1]) / 1000,
    failed: Number(req[2]),
    errored: Number(req[3]),
    timeouts: Number(req[4]),
    non2xx: Math.max(0, done - ok),
    dataBytes: data === null ? 0 : Number(data[1]),
    connectMeanMs: mean(text, "time for connect"),
    ttfbMeanMs: mean(text, "time to 1st byte"),
    tlsProtocol: field(text, "TLS Protocol"),
    cipher: field(text, "Cipher"),
    tempKey: field(text, "Server Temp Key"),
    alpn: field(text, "Application protocol"),
  };
}

/**
 * Request times in ms from an h2load `--log-file` (lines `start-us TAB status TAB duration-us`;
 * status `-1` for a failed request, left out). Throws on a line it does not understand.
 */
export function logTimesMs(text: string): number[] {
  const out: number[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const m = /^(\d+)\t(-1|\d{3})\t(\d+)$/.exec(line);
    if (m === null) throw new Error(`Unexpected h2load log line: ${JSON.stringify(line)}`);
    if (m[2] !== "-1") out.push(Number(m[3]) / 1000);
  }
  return out;
}

/** The `p`th percentile (nearest rank) of `values`; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** `r` with its p50 and p99 taken from the request times of its log file. */
export function withPercentiles(r: H2loadResult, timesMs: readonly number[]): H2loadResult {
  return { ...r, p50Ms: percentile(timesMs, 50), p99Ms: percentile(timesMs, 99) };
}

/**
 * Several h2load runs back to back as one (the full-handshake load runs h2load again and again,
 * one request per client): counts add up, the rate is requests over the summed run times, the
 * means are weighted by requests. Percentiles stay NaN (take them from the joined log files).
 */
export function sumH2load(runs: readonly H2loadResult[]): H2loadResult {
  if (runs.length === 0) throw new Error("sumH2load needs at least one run");
  const total = (f: (r: H2loadResult) => number) => runs.reduce((n, r) => n + f(r), 0);
  const requests = total((r) => r.requests);
  const seconds = total((r) => r.seconds);
  const weighted = (f: (r: H2loadResult) => number) =>
    requests === 0 ? NaN : total((r) => (r.requests === 0 ? 0 : f(r) * r.requests)) / requests;
  return {
    ...runs[0],
    requestsPerSec: seconds > 0 ? requests / seconds : 0,
    p50Ms: NaN,
    p99Ms: NaN,
    requests,
    seconds,
    failed: total((r) => r.failed),
    errored: total((r) => r.errored),
    timeouts: total((r) => r.timeouts),
    non2xx: total((r) => r.non2xx),
    dataBytes: total((r) => r.dataBytes),
    connectMeanMs: weighted((r) => r.connectMeanMs),
    ttfbMeanMs: weighted((r) => r.ttfbMeanMs),
  };
}
