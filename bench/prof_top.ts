/**
 * Summarises a V8 `.cpuprofile` (from `deno run --cpu-prof`): the top functions by self time
 * with file:line, their inclusive share, the hottest line inside each, and self time per file.
 * Deno writes function positions in TypeScript coordinates already, but line ticks in those of
 * the emitted JavaScript: those go through the inline source maps of Deno's emit cache.
 *
 *   deno run --allow-read --allow-env bench/prof_top.ts [FILE.cpuprofile | DIR] [--top 25]
 *
 * DIR (default bench/out/prof) means its newest profile. Lines map through the emit cache in
 * DENO_DIR (default ~/.cache/deno), so read a profile before its sources change.
 */

import { parseArgs } from "node:util";
import { inlineMap, type Segment, sourceLine } from "./source_map.ts";

/** The parts of a V8 CPU profile used here. */
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
  /** Ticks per line (1-based, in the emitted script). */
  positionTicks?: { line: number; ticks: number }[];
}

/** Maps an emitted position (0-based line and column) of `url` to a 0-based source line, or -1. */
export type Resolver = (url: string, line: number, col: number) => number;

/** One function of the summary; percentages are of busy (non-idle) time. */
export interface TopFunction {
  name: string;
  /** `path:line` of the function's start (as the profile gives it). */
  location: string;
  selfMs: number;
  selfPct: number;
  totalPct: number;
  /** `path:line` holding most of its ticks, when the profile has line ticks. */
  hotLine?: string;
}

export interface ProfileSummary {
  /** Sampled time without `(idle)`, and the idle, GC and `(program)` (native) parts. */
  busyMs: number;
  idleMs: number;
  gcMs: number;
  programMs: number;
  functions: TopFunction[];
  files: { file: string; selfMs: number; selfPct: number }[];
}

const IDLE = "(idle)";

function displayPath(url: string): string {
  if (!url.startsWith("file://")) return url;
  const path = decodeURIComponent(new URL(url).pathname);
  const cwd = Deno.cwd() + "/";
  return path.startsWith(cwd) ? path.slice(cwd.length) : path;
}

/** Self microseconds per node id, from sample timings when present, else from hit counts. */
function selfTimes(p: CpuProfile): Map<number, number> {
  const self = new Map<number, number>();
  const samples = p.samples ?? [];
  const deltas = p.timeDeltas ?? [];
  if (samples.length > 0 && deltas.length === samples.length) {
    const mean = (p.endTime - p.startTime) / samples.length;
    // A sample lasts until the next one; the last one gets the mean interval.
    for (let i = 0; i < samples.length; i++) {
      const dt = i + 1 < deltas.length ? Math.max(0, deltas[i + 1]) : mean;
      self.set(samples[i], (self.get(samples[i]) ?? 0) + dt);
    }
    return self;
  }
  const hits = p.nodes.reduce((s, n) => s + (n.hitCount ?? 0), 0);
  const per = hits === 0 ? 0 : (p.endTime - p.startTime) / hits;
  for (const n of p.nodes) self.set(n.id, (n.hitCount ?? 0) * per);
  return self;
}

function keyOf(n: ProfileNode): string {
  const f = n.callFrame;
  return `${f.functionName}\u0000${f.url}\u0000${f.lineNumber}\u0000${f.columnNumber}`;
}

/** Summarises `p`: the `top` functions by self time and self time per file. */
export function summarize(
  p: CpuProfile,
  top: number,
  resolve: Resolver = () => -1,
): ProfileSummary {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = selfTimes(p);
  const childIds = new Set(p.nodes.flatMap((n) => n.children ?? []));
  const roots = p.nodes.filter((n) => !childIds.has(n.id));

  // Inclusive time per node, then per function counting each stack once (recursion).
  const subtree = new Map<number, number>();
  const sub = (n: ProfileNode): number => {
    let t = self.get(n.id) ?? 0;
    for (const c of n.children ?? []) t += sub(byId.get(c)!);
    subtree.set(n.id, t);
    return t;
  };
  for (const r of roots) sub(r);
  const total = new Map<string, number>();
  const onStack = new Map<string, number>();
  const walk = (n: ProfileNode) => {
    const k = keyOf(n);
    const depth = onStack.get(k) ?? 0;
    if (depth === 0) total.set(k, (total.get(k) ?? 0) + subtree.get(n.id)!);
    onStack.set(k, depth + 1);
    for (const c of n.children ?? []) walk(byId.get(c)!);
    onStack.set(k, depth);
  };
  for (const r of roots) walk(r);

  const fnSelf = new Map<string, { node: ProfileNode; us: number; ticks: Map<number, number> }>();
  const fileSelf = new Map<string, number>();
  let idle = 0;
  let gc = 0;
  let program = 0;
  let all = 0;
  for (const n of p.nodes) {
    const us = self.get(n.id) ?? 0;
    all += us;
    const name = n.callFrame.functionName;
    if (name === IDLE) idle += us;
    if (name === "(garbage collector)") gc += us;
    if (name === "(program)") program += us;
    const k = keyOf(n);
    let e = fnSelf.get(k);
    if (e === undefined) fnSelf.set(k, e = { node: n, us: 0, ticks: new Map() });
    e.us += us;
    for (const t of n.positionTicks ?? []) {
      e.ticks.set(t.line, (e.ticks.get(t.line) ?? 0) + t.ticks);
    }
    const file = n.callFrame.url === "" ? name : displayPath(n.callFrame.url);
    if (name !== IDLE && us > 0) fileSelf.set(file, (fileSelf.get(file) ?? 0) + us);
  }
  const busy = all - idle;
  const pct = (us: number) => busy === 0 ? 0 : (100 * us) / busy;
  // Deno's own ext: modules live in the snapshot, most with no line (0) to show.
  const at = (url: string, line0: number): string =>
    url === "" || line0 < 0
      ? ""
      : !url.startsWith("file://") && line0 === 0
      ? url
      : `${displayPath(url)}:${line0 + 1}`;
  const emitted = (url: string, line0: number): string => {
    const src = url.startsWith("file://") ? resolve(url, line0, 0) : -1;
    return src >= 0 ? at(url, src) : `${at(url, line0)} (emitted)`;
  };

  const functions = [...fnSelf.entries()]
    .filter(([, e]) => e.node.callFrame.functionName !== IDLE && e.us > 0)
    .sort((x, y) => y[1].us - x[1].us)
    .slice(0, top)
    .map(([k, e]): TopFunction => {
      const f = e.node.callFrame;
      let hotLine: string | undefined;
      if (e.ticks.size > 0) {
        const [line] = [...e.ticks.entries()].sort((x, y) => y[1] - x[1])[0];
        hotLine = f.url.startsWith("file://") ? emitted(f.url, line - 1) : undefined;
      }
      return {
        name: f.functionName === "" ? "(anonymous)" : f.functionName,
        location: at(f.url, f.lineNumber),
        selfMs: e.us / 1000,
        selfPct: pct(e.us),
        totalPct: pct(total.get(k) ?? 0),
        hotLine,
      };
    });
  const files = [...fileSelf.entries()]
    .sort((x, y) => y[1] - x[1])
    .slice(0, 15)
    .map(([file, us]) => ({ file, selfMs: us / 1000, selfPct: pct(us) }));
  return {
    busyMs: busy / 1000,
    idleMs: idle / 1000,
    gcMs: gc / 1000,
    programMs: program / 1000,
    functions,
    files,
  };
}

/** A Resolver reading the inline source maps of Deno's emit cache (`$DENO_DIR/gen/file/...`). */
export function denoEmitResolver(denoDir = defaultDenoDir()): Resolver {
  const maps = new Map<string, Segment[][] | undefined>();
  return (url, line, col) => {
    if (!url.startsWith("file://")) return -1;
    let m = maps.get(url);
    if (!maps.has(url)) {
      const path = decodeURIComponent(new URL(url).pathname);
      // Plain JavaScript runs as written; TypeScript runs from the emit cache.
      if (/\.(m?js|cjs)$/.test(path)) {
        maps.set(url, undefined);
        return line;
      }
      try {
        m = inlineMap(Deno.readTextFileSync(`${denoDir}/gen/file${path}.js`));
      } catch {
        m = undefined;
      }
      maps.set(url, m);
    }
    if (m === undefined) return /\.(m?js|cjs)$/.test(url) ? line : -1;
    return sourceLine(m, line, col);
  };
}

function defaultDenoDir(): string {
  return Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME") ?? ""}/.cache/deno`;
}

/** The summary as text: totals, the top functions, then self time per file. */
export function formatSummary(s: ProfileSummary): string {
  const out: string[] = [];
  const share = (ms: number) => s.busyMs === 0 ? "0.0" : ((100 * ms) / s.busyMs).toFixed(1);
  out.push(
    `busy ${s.busyMs.toFixed(0)} ms (idle ${s.idleMs.toFixed(0)} ms not counted); ` +
      `GC ${share(s.gcMs)}%, (program) native ${share(s.programMs)}%`,
  );
  out.push("");
  out.push(" #   self ms  self%  total%  function  (location; hottest line)");
  s.functions.forEach((f, i) => {
    const loc = f.location === "" ? "" : `  ${f.location}`;
    const hot = f.hotLine !== undefined && f.hotLine !== f.location ? `; hot ${f.hotLine}` : "";
    out.push(
      `${String(i + 1).padStart(2)}  ${f.selfMs.toFixed(1).padStart(8)}  ${
        f.selfPct.toFixed(1).padStart(5)
      }` +
        `  ${f.totalPct.toFixed(1).padStart(6)}  ${f.name}${loc}${hot}`,
    );
  });
  out.push("");
  out.push("self time by file:");
  for (const f of s.files) out.push(`  ${f.selfPct.toFixed(1).padStart(5)}%  ${f.file}`);
  return out.join("\n");
}

/** The newest `.cpuprofile` in `dir`, or undefined. */
export function newestProfile(dir: string): string | undefined {
  let best: { path: string; mtime: number } | undefined;
  for (const e of Deno.readDirSync(dir)) {
    if (!e.isFile || !e.name.endsWith(".cpuprofile")) continue;
    const path = `${dir}/${e.name}`;
    const mtime = Deno.statSync(path).mtime?.getTime() ?? 0;
    if (best === undefined || mtime > best.mtime) best = { path, mtime };
  }
  return best?.path;
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    options: { top: { type: "string", default: "25" } },
    allowPositionals: true,
  });
  const target = positionals[0] ?? new URL("./out/prof", import.meta.url).pathname;
  const file = Deno.statSync(target).isDirectory ? newestProfile(target) : target;
  if (file === undefined) {
    console.error(`prof_top: no .cpuprofile in ${target}`);
    Deno.exit(1);
  }
  const profile = JSON.parse(Deno.readTextFileSync(file)) as CpuProfile;
  console.log(
    `${file}\n${formatSummary(summarize(profile, Number(values.top), denoEmitResolver()))}`,
  );
}
