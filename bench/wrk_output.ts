/** What one wrk run measured, parsed from its text output (`wrk --latency`). */
export interface WrkResult {
  requestsPerSec: number;
  /** Latency percentiles in milliseconds; NaN when wrk printed no distribution. */
  p50Ms: number;
  p99Ms: number;
  /** Completed requests and the seconds they took. */
  requests: number;
  seconds: number;
  /** Responses outside 2xx and 3xx. */
  non2xx: number;
  /** wrk's socket errors: connect, read, write, timeout. */
  connectErrors: number;
  readErrors: number;
  writeErrors: number;
  timeouts: number;
  transferPerSec: string;
}

const TIME_UNITS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds of a wrk time such as `812.00us`, `1.23ms`, `2.00s`; NaN when malformed. */
export function wrkTimeMs(text: string): number {
  const m = /^([0-9.]+)(us|ms|s|m|h)$/.exec(text.trim());
  if (m === null) return NaN;
  return Number(m[1]) * TIME_UNITS[m[2]];
}

/** Parses wrk's report; throws when the `Requests/sec` line is missing. */
export function parseWrk(text: string): WrkResult {
  const rps = /^Requests\/sec:\s+([0-9.]+)/m.exec(text);
  if (rps === null) throw new Error(`No Requests/sec line in wrk output: ${text.slice(0, 300)}`);
  const pct = (p: string): number => {
    const m = new RegExp(`^\\s+${p}%\\s+(\\S+)`, "m").exec(text);
    return m === null ? NaN : wrkTimeMs(m[1]);
  };
  const total = /^\s+(\d+) requests in ([0-9.]+\w+),/m.exec(text);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(text);
  const transfer = /^Transfer\/sec:\s+(\S+)/m.exec(text);
  return {
    requestsPerSec: Number(rps[1]),
    p50Ms: pct("50"),
    p99Ms: pct("99"),
    requests: total === null ? 0 : Number(total[1]),
    seconds: total === null ? NaN : wrkTimeMs(total[2]) / 1000,
    non2xx: non2xx === null ? 0 : Number(non2xx[1]),
    connectErrors: sock === null ? 0 : Number(sock[1]),
    readErrors: sock === null ? 0 : Number(sock[2]),
    writeErrors: sock === null ? 0 : Number(sock[3]),
    timeouts: sock === null ? 0 : Number(sock[4]),
    transferPerSec: transfer === null ? "" : transfer[1],
  };
}
