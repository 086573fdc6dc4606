/** One measured cell of the comparison. */
export interface Row {
  scenario: string;
  server: string;
  requestsPerSec: number;
  p99Ms: number;
  /** Non-2xx/3xx responses plus wrk socket errors. */
  errors: number;
  /** CPU time of the proxy process per request in microseconds, and its CPU use in % of one core. */
  cpuUsPerReq?: number;
  cpuPct?: number;
  /** The user-space and kernel parts of `cpuUsPerReq`. */
  userUsPerReq?: number;
  sysUsPerReq?: number;
  /** Connections opened to members per 1000 requests. */
  upstreamConnsPer1k?: number;
  /**
   * A keep-alive scenario in which some proxy opened more than 5 member connections per 1,000
   * requests: its figures are shown but not compared (see {@link markUnfair}).
   */
  unfair?: boolean;
}

/**
 * Marks `unfair` every row of a keep-alive scenario (`keepAlive(name)`) in which any proxy
 * opened more than `limit` member connections per 1,000 requests: that proxy paid for
 * connections the others did not, so no ratio between them is honest. The `floor` has no
 * pool (one member connection per client connection, opened when the client's is): it is
 * left out of the judgement.
 */
export function markUnfair(
  rows: readonly Row[],
  keepAlive: (scenario: string) => boolean,
  limit: number,
): Row[] {
  const bad = new Set(
    rows.filter((r) =>
      r.server !== "floor" && keepAlive(r.scenario) && (r.upstreamConnsPer1k ?? 0) > limit
    ).map((r) => r.scenario),
  );
  return rows.map((r) => bad.has(r.scenario) ? { ...r, unfair: true } : r);
}

/**
 * req/s of `server` divided by nginx's in the same scenario; NaN without an nginx row and in an
 * unfair scenario.
 */
export function ratioToNginx(rows: readonly Row[], r: Row): number {
  const base = rows.find((x) => x.scenario === r.scenario && x.server === "nginx");
  return r.unfair || base === undefined || base.requestsPerSec === 0
    ? NaN
    : r.requestsPerSec / base.requestsPerSec;
}

function fmtRate(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

function fmtMs(ms: number): string {
  if (Number.isNaN(ms)) return "-";
  return ms < 10 ? `${ms.toFixed(2)} ms` : `${ms.toFixed(1)} ms`;
}

/**
 * A fixed-width text table: scenario, server, req/s, p99, ratio to nginx, the proxy's CPU,
 * connections opened to members per 1000 requests, errors.
 */
export function renderTable(rows: readonly Row[]): string {
  const head = [
    "scenario",
    "server",
    "req/s",
    "p99",
    "vs nginx",
    "cpu us/req",
    "usr+sys",
    "cpu %",
    "member conns/1k",
    "errors",
  ];
  const body = rows.map((r) => {
    const ratio = ratioToNginx(rows, r);
    return [
      r.scenario,
      r.server,
      fmtRate(r.requestsPerSec),
      fmtMs(r.p99Ms),
      r.unfair ? "unfair" : Number.isNaN(ratio) ? "-" : `${ratio.toFixed(2)}x`,
      r.cpuUsPerReq === undefined ? "-" : r.cpuUsPerReq.toFixed(1),
      r.userUsPerReq === undefined || r.sysUsPerReq === undefined
        ? "-"
        : `${r.userUsPerReq.toFixed(0)}+${r.sysUsPerReq.toFixed(0)}`,
      r.cpuPct === undefined ? "-" : r.cpuPct.toFixed(0),
      r.upstreamConnsPer1k === undefined ? "-" : r.upstreamConnsPer1k.toFixed(1),
      r.errors === 0 ? "-" : String(r.errors),
    ];
  });
  const all = [head, ...body];
  const width = head.map((_, c) => Math.max(...all.map((line) => line[c].length)));
  // Names left-aligned, figures right-aligned.
  const line = (cells: string[]) =>
    cells.map((cell, c) => c < 2 ? cell.padEnd(width[c]) : cell.padStart(width[c])).join("  ")
      .trimEnd();
  const rule = width.map((w) => "-".repeat(w)).join("  ");
  return [line(head), rule, ...body.map(line)].join("\n");
}
