/** Human-readable tables for `scalwsd ctl`. */

type Row = readonly string[];

/** Left-aligned columns separated by two spaces. */
export function table(header: Row, rows: readonly Row[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: Row) => r.map((c, i) => i === r.length - 1 ? c : c.padEnd(widths[i])).join("  ");
  return [line(header), ...rows.map(line)].join("\n");
}

interface MemberJson {
  address: string;
  weight: number;
  in_flight: number;
  failures: number;
  state: string;
  ejected_until: string | null;
}

export function formatPool(p: Record<string, unknown>): string {
  const members = (p.members ?? []) as MemberJson[];
  let head =
    `pool ${p.name}  balance ${p.balance}  members_from ${p.members_from}  members ${members.length}`;
  if (p.source !== undefined) {
    // Where the list comes from, when it last changed, and the last discovery error.
    head += `\n  source ${p.source}  updated ${p.updated_at ?? "-"}  last error ${
      p.last_error === null || p.last_error === undefined
        ? "-"
        : `${p.last_error_at} ${JSON.stringify(p.last_error)}`
    }`;
  }
  if (members.length === 0) return `${head}\n  (no members: requests get 503)`;
  const rows = members.map((m) => [
    m.address,
    String(m.weight),
    String(m.in_flight),
    String(m.failures),
    m.state,
    m.ejected_until ?? "-",
  ]);
  return head + "\n" +
    table(["MEMBER", "WEIGHT", "IN_FLIGHT", "FAILURES", "STATE", "EJECTED_UNTIL"], rows)
      .split("\n").map((l) => "  " + l).join("\n");
}

export function formatPools(pools: readonly Record<string, unknown>[]): string {
  if (pools.length === 0) return "no pools";
  return pools.map(formatPool).join("\n\n");
}

interface ProcessJson {
  id: number;
  pid: number;
  state: string;
  restarts: number;
  in_flight: number;
  cpu_seconds: number;
  uptime_seconds: number;
}

/** `scalwsd ctl apps`: one block per application, one row per worker process. */
export function formatApps(apps: readonly Record<string, unknown>[]): string {
  if (apps.length === 0) return "no applications";
  return apps.map((a) => {
    const procs = (a.workers ?? []) as ProcessJson[];
    const head =
      `app ${a.tenant}/${a.app}  type ${a.type}  workers ${a.desired_workers}  restarts ${a.restarts}`;
    const rows = procs.map((w) => [
      String(w.id),
      w.pid > 0 ? String(w.pid) : "-",
      w.state,
      String(w.restarts),
      String(w.in_flight),
      w.cpu_seconds.toFixed(2),
      w.uptime_seconds.toFixed(1),
    ]);
    return head + "\n" +
      table(["WORKER", "PID", "STATE", "RESTARTS", "IN_FLIGHT", "CPU_S", "UPTIME_S"], rows)
        .split("\n").map((l) => "  " + l).join("\n");
  }).join("\n\n");
}

/** `scalwsd ctl cache`: totals, then one line per application. */
export function formatCache(c: Record<string, unknown>): string {
  const apps = (c.applications ?? []) as {
    tenant: string;
    app: string;
    objects: number;
    bytes: number;
    hit_ratio: number;
  }[];
  const pct = (r: number) => `${(r * 100).toFixed(1)}%`;
  const head = `objects ${c.objects}  bytes ${c.bytes} of ${c.max_size}  evictions ${c.evictions}` +
    `  hit ratio ${pct(c.hit_ratio as number)}`;
  if (apps.length === 0) return head;
  const rows = apps.map((
    a,
  ) => [a.tenant, a.app, String(a.objects), String(a.bytes), pct(a.hit_ratio)]);
  return head + "\n" + table(["TENANT", "APP", "OBJECTS", "BYTES", "HIT_RATIO"], rows);
}

/** One entry of `GET /v1/sites`. */
export interface SiteJson {
  file: string;
  main: boolean;
  tenants: string[];
  domains: string[];
}

/** `scalwsd ctl sites`: one line per file with its tenants and domains. */
export function formatSites(sites: readonly SiteJson[]): string {
  const rows = sites.map((s) => [
    s.main ? `${s.file} (main)` : s.file,
    s.tenants.join(",") || "-",
    s.domains.join(",") || "-",
  ]);
  return table(["FILE", "TENANTS", "DOMAINS"], rows);
}
