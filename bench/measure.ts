/**
 * What the bench reads around each wrk run besides wrk's own report: the proxy's CPU time,
 * everyone else's CPU time on the machine (to flag interference), and the connections the
 * members accepted (to show keep-alive reuse towards members).
 */

import { type CpuTicks, cpuTicks, systemBusyTicks } from "./procs.ts";
import type { WrkResult } from "./wrk_output.ts";

/** Counters read before and after a run; undefined where unreadable. */
export interface Snapshot {
  /** CPU ticks of the proxy process. */
  proxy?: CpuTicks;
  /** CPU ticks of every process of the bench: proxy, members, the bench and its reaped wrk. */
  ours?: number;
  /** Busy ticks of the whole machine. */
  system?: number;
  /** Connections the members accepted so far. */
  accepts?: number;
}

/** Figures derived from two snapshots around one run. */
export interface Derived {
  /** Proxy CPU time per request, microseconds: all, in user space, in the kernel. */
  cpuUsPerReq?: number;
  userUsPerReq?: number;
  sysUsPerReq?: number;
  /** Proxy CPU use, % of one core. */
  cpuPct?: number;
  /** CPU used by processes outside the bench, % of one core: above ~10 the run was disturbed. */
  otherPct?: number;
  /** Connections opened to members per 1000 requests (0 when every one was reused). */
  upstreamConnsPer1k?: number;
}

/** Where to read the counters. */
export interface Probe {
  proxyPid: number;
  memberPids: readonly number[];
  benchPid: number;
  /** Connections accepted so far by all members; one status read opens `statusConns` itself. */
  accepts: () => Promise<number | undefined>;
  statusConns: number;
}

/** Reads every counter of `p`. */
export async function snapshot(p: Probe): Promise<Snapshot> {
  const accepts = await p.accepts();
  const proxy = await cpuTicks(p.proxyPid);
  let ours = total(proxy);
  for (const pid of p.memberPids) ours = add(ours, total(await cpuTicks(pid)));
  ours = add(ours, total(await cpuTicks(p.benchPid, true)));
  const system = await systemBusyTicks();
  return { proxy, ours, system, accepts };
}

function total(t: CpuTicks | undefined): number | undefined {
  return t === undefined ? undefined : t.user + t.system;
}

function add(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : a + b;
}

/**
 * The figures of one run from the snapshots around it, `hz` clock ticks per second;
 * `statusConns` connections per snapshot were the bench's own status reads.
 */
export function derive(
  a: Snapshot,
  b: Snapshot,
  r: WrkResult,
  hz: number,
  statusConns: number,
): Derived {
  const out: Derived = {};
  const seconds = r.seconds > 0 ? r.seconds : NaN;
  if (a.proxy !== undefined && b.proxy !== undefined && r.requests > 0) {
    const user = (b.proxy.user - a.proxy.user) / hz;
    const sys = (b.proxy.system - a.proxy.system) / hz;
    const cpuS = user + sys;
    out.cpuUsPerReq = (cpuS * 1e6) / r.requests;
    out.userUsPerReq = (user * 1e6) / r.requests;
    out.sysUsPerReq = (sys * 1e6) / r.requests;
    if (!Number.isNaN(seconds)) out.cpuPct = (100 * cpuS) / seconds;
  }
  if (
    a.ours !== undefined && b.ours !== undefined && a.system !== undefined &&
    b.system !== undefined &&
    !Number.isNaN(seconds)
  ) {
    const other = (b.system - a.system) - (b.ours - a.ours);
    out.otherPct = Math.max(0, (100 * other) / hz / seconds);
  }
  if (a.accepts !== undefined && b.accepts !== undefined && r.requests > 0) {
    const opened = Math.max(0, b.accepts - a.accepts - statusConns);
    out.upstreamConnsPer1k = (1000 * opened) / r.requests;
  }
  return out;
}

/**
 * Waits until the machine is quiet: busy below `maxPct` of a core over one second, while the
 * bench's own processes idle. Gives up after `maxWaitS` seconds; returns the last busy figure.
 */
export async function waitQuiet(maxPct: number, maxWaitS: number, hz: number): Promise<number> {
  const deadline = Date.now() + maxWaitS * 1000;
  for (;;) {
    const a = await systemBusyTicks();
    await new Promise((r) => setTimeout(r, 1000));
    const b = await systemBusyTicks();
    if (a === undefined || b === undefined) return NaN;
    const pct = (100 * (b - a)) / hz;
    if (pct < maxPct || Date.now() >= deadline) return pct;
  }
}
