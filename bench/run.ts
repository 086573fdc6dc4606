/**
 * `deno task bench`: scalwsd, nginx (one worker) and HAProxy (one thread) side by side, each
 * proxying to the same nginx members on loopback, measured by the same wrk scenarios. Prints a
 * table (req/s, p99, ratio to nginx), RSS after the 512-connection run, and writes JSON to
 * bench/out/. See bench/README.md.
 *
 *   deno task bench [--quick] [--duration 5s] [--warmup 2s] [--only get-64,pool-rr]
 *                   [--servers scalwsd,nginx] [--repeat 1] [--profile] [--keep]
 */

import { parseArgs } from "node:util";
import { AffinityKey, affinityValue } from "../src/upstream/affinity.ts";
import {
  type BenchLayout,
  COOKIE,
  cookieLua,
  haproxyConf,
  memberNginxConf,
  PATHS,
  postLua,
  proxyNginxConf,
  scalwsdYaml,
  smallBody,
} from "./configs.ts";
import {
  childPids,
  clockTicks,
  cpuTicks,
  findExecutable,
  freePorts,
  Procs,
  rssKiB,
  waitReady,
} from "./procs.ts";
import { type Scenario, selectScenarios, selectServers, type ServerName } from "./scenarios.ts";
import { ratioToNginx, renderTable, type Row } from "./table.ts";
import { parseWrk, type WrkResult } from "./wrk_output.ts";
import {
  denoEmitResolver,
  formatSummary,
  newestProfile,
  type ProfileSummary,
  summarize,
} from "./prof_top.ts";

const USAGE = `usage: deno task bench [options]
  --duration D   measured seconds per run (default 5s; --quick: 3s)
  --warmup D     warm-up seconds before each run (default 2s; --quick: 1s)
  --quick        shorter runs
  --only LIST    scenarios, comma-separated (default: all)
  --servers LIST scalwsd,nginx,haproxy (default: all)
  --repeat N     runs per cell, the median by req/s is reported (default 1)
  --threads N    wrk threads (default 2)
  --profile      run scalwsd with --cpu-prof into bench/out/prof/ and print its top functions
  --keep         keep the temporary directory (configs, logs)`;

const POST_BYTES = 64 * 1024;
const FILE_16K = 16 * 1024;
const FILE_1M = 1024 * 1024;
const MAIN_TS = new URL("../main.ts", import.meta.url).pathname;
const OUT_DIR = new URL("./out/", import.meta.url).pathname;

interface Options {
  durationS: number;
  warmupS: number;
  scenarios: Scenario[];
  servers: ServerName[];
  repeat: number;
  threads: number;
  profile: boolean;
  keep: boolean;
}

/** Seconds from `10s`, `10`, `1500ms`; throws naming the option when malformed. */
function seconds(text: string, option: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (m === null) throw new Error(`Invalid --${option} "${text}": expected e.g. 5s`);
  const n = Number(m[1]);
  const s = m[2] === "ms" ? n / 1000 : m[2] === "m" ? n * 60 : n;
  if (s < 1 && option === "duration") throw new Error(`Invalid --duration "${text}": at least 1s`);
  return s;
}

function options(argv: string[]): Options | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: "string" },
      warmup: { type: "string" },
      quick: { type: "boolean", default: false },
      only: { type: "string" },
      servers: { type: "string" },
      repeat: { type: "string", default: "1" },
      threads: { type: "string", default: "2" },
      profile: { type: "boolean", default: false },
      keep: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) return null;
  const repeat = Number(values.repeat);
  const threads = Number(values.threads);
  if (!Number.isInteger(repeat) || repeat < 1) {
    throw new Error(`Invalid --repeat "${values.repeat}"`);
  }
  if (!Number.isInteger(threads) || threads < 1) {
    throw new Error(`Invalid --threads "${values.threads}"`);
  }
  const profile = values.profile;
  return {
    durationS: seconds(values.duration ?? (values.quick ? "3s" : "5s"), "duration"),
    warmupS: seconds(values.warmup ?? (values.quick ? "1s" : "2s"), "warmup"),
    // Profiling looks at scalwsd alone, by default under the headline load.
    scenarios: selectScenarios(values.only ?? (profile ? "get-64" : undefined)),
    servers: profile ? ["scalwsd"] : selectServers(values.servers),
    repeat,
    threads,
    profile,
    keep: values.keep,
  };
}

/** The wrk, nginx and haproxy executables, or an error naming every missing one. */
function tools(): { wrk: string; nginx: string; haproxy: string } {
  const wrk = findExecutable("wrk");
  const nginx = findExecutable("nginx");
  const haproxy = findExecutable("haproxy");
  const missing = [wrk ? "" : "wrk", nginx ? "" : "nginx", haproxy ? "" : "haproxy"].filter((x) =>
    x !== ""
  );
  if (missing.length > 0) {
    throw new Error(
      `Missing ${
        missing.join(", ")
      }: the bench needs wrk, nginx and haproxy on PATH or in /usr/sbin ` +
        `(Debian: apt-get install wrk nginx haproxy)`,
    );
  }
  return { wrk: wrk!, nginx: nginx!, haproxy: haproxy! };
}

async function firstLine(procs: Procs, cmd: string, args: string[]): Promise<string> {
  try {
    const out = await procs.output("version", cmd, args);
    return (out.stdout + out.stderr).split("\n").find((l) => l.trim() !== "")?.trim() ?? "";
  } catch {
    return "";
  }
}

/** Fetches `path` from `port` and returns status, body and the set-cookie header. */
async function get(port: number, path: string, init: RequestInit = {}) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    ...init,
    signal: AbortSignal.timeout(5000),
  });
  const body = new Uint8Array(await res.arrayBuffer());
  return {
    status: res.status,
    body,
    text: new TextDecoder().decode(body),
    cookie: res.headers.get("set-cookie"),
  };
}

function expect(ok: boolean, server: string, what: string): void {
  if (!ok) throw new Error(`Sanity check failed for ${server}: ${what}`);
}

/** Checks that `server` answers every scenario's path as the members would. */
async function verify(server: ServerName, port: number, l: BenchLayout): Promise<void> {
  const a = smallBody("a");
  const b = smallBody("b");
  let r = await get(port, PATHS.small);
  expect(
    r.status === 200 && r.text === a,
    server,
    `GET / gave ${r.status} ${JSON.stringify(r.text.slice(0, 80))}`,
  );
  r = await get(port, PATHS.file16k);
  expect(
    r.status === 200 && r.body.length === FILE_16K,
    server,
    `16 KiB file gave ${r.status}, ${r.body.length} bytes`,
  );
  r = await get(port, PATHS.file1m);
  expect(
    r.status === 200 && r.body.length === FILE_1M,
    server,
    `1 MiB file gave ${r.status}, ${r.body.length} bytes`,
  );
  r = await get(port, PATHS.post, { method: "POST", body: new Uint8Array(POST_BYTES) });
  expect(
    r.status === 200 && r.text === "a ok\n",
    server,
    `POST gave ${r.status} ${JSON.stringify(r.text)}`,
  );
  const seen = new Set<string>();
  for (let i = 0; i < 4; i++) seen.add((await get(port, PATHS.rr)).text);
  expect(
    seen.size === 2 && seen.has(a) && seen.has(b),
    server,
    `round robin reached ${[...seen].join(" | ")}`,
  );
  const byCookie = async (v: string) =>
    (await get(port, PATHS.hash, { headers: { cookie: `${COOKIE}=${v}` } })).text;
  const ca = await byCookie(l.affinity[0]);
  const cb = await byCookie(l.affinity[1]);
  expect(
    ca === (await byCookie(l.affinity[0])),
    server,
    "the same cookie reached different members",
  );
  if (server === "nginx") {
    // nginx hashes the cookie's value: which member each value lands on is its own choice.
    expect(
      (ca === a || ca === b) && (cb === a || cb === b),
      server,
      `cookie pool answered ${ca} | ${cb}`,
    );
  } else {
    expect(ca === a && cb === b, server, `affinity cookies reached ${ca.trim()} | ${cb.trim()}`);
  }
  if (server === "scalwsd") {
    // The cookie scalwsd issues must be one of the values the bench computed.
    const c = (await get(port, PATHS.hash)).cookie ?? "";
    const v = /^BENCHAFF=([0-9a-f]{32})/.exec(c)?.[1];
    expect(
      v !== undefined && l.affinity.includes(v),
      server,
      `issued affinity cookie ${JSON.stringify(c)}`,
    );
    r = await get(port, PATHS.one);
    expect(r.status === 200 && r.text === a, server, `1-member pool gave ${r.status}`);
  }
}

/** One measured run: wrk's figures plus the proxy process's CPU use. */
interface Run extends WrkResult {
  cpuUsPerReq?: number;
  cpuPct?: number;
}

interface Cell {
  scenario: string;
  server: ServerName;
  /** The run reported (median by req/s). */
  result: Run;
  runs: Run[];
}

function median(runs: Run[]): Run {
  const sorted = [...runs].sort((x, y) => x.requestsPerSec - y.requestsPerSec);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

function errorCount(r: WrkResult): number {
  return r.non2xx + r.connectErrors + r.readErrors + r.writeErrors + r.timeouts;
}

function mib(kib: number | undefined): string {
  return kib === undefined ? "?" : `${(kib / 1024).toFixed(1)} MiB`;
}

async function main(argv: string[]): Promise<number> {
  let opt: Options | null;
  try {
    opt = options(argv);
  } catch (err) {
    console.error(`bench: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (opt === null) {
    console.log(USAGE);
    return 0;
  }
  let bin;
  try {
    bin = tools();
  } catch (err) {
    console.error(`bench: ${(err as Error).message}`);
    return 1;
  }

  const procs = new Procs();
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-bench-" });
  let cleaning: Promise<void> | null = null;
  const cleanup = () =>
    cleaning ??= (async () => {
      await procs.stopAll();
      if (!opt.keep) await Deno.remove(dir, { recursive: true }).catch(() => {});
    })();
  const onSignal = () => {
    console.error("\nbench: interrupted, stopping every process");
    cleanup().finally(() => Deno.exit(130));
  };
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) Deno.addSignalListener(s, onSignal);

  try {
    return await bench(opt, bin, procs, dir);
  } catch (err) {
    console.error(`bench: ${(err as Error).message}`);
    const dead = await procs.exited();
    if (dead.length > 0) {
      console.error(`bench: exited early: ${dead.join(", ")}; logs in ${dir} (kept)`);
    }
    if (dead.length > 0) opt.keep = true;
    return 1;
  } finally {
    await cleanup();
    for (const s of signals) Deno.removeSignalListener(s, onSignal);
  }
}

async function bench(
  opt: Options,
  bin: { wrk: string; nginx: string; haproxy: string },
  procs: Procs,
  dir: string,
): Promise<number> {
  const [pa, pb, ps, pn, ph] = freePorts(5);
  const keyFile = `${dir}/affinity.key`;
  const key = AffinityKey.fromFile(keyFile);
  const l: BenchLayout = {
    dir,
    members: [pa, pb],
    scalwsd: ps,
    nginx: pn,
    haproxy: ph,
    affinity: [affinityValue(key, `127.0.0.1:${pa}`), affinityValue(key, `127.0.0.1:${pb}`)],
    root: Deno.uid() === 0,
  };
  const ports: Record<ServerName, number> = { scalwsd: ps, nginx: pn, haproxy: ph };

  await Deno.mkdir(`${dir}/www/f`, { recursive: true });
  const fill = (n: number) => new Uint8Array(n).map((_, i) => 97 + (i % 26));
  await Deno.writeFile(`${dir}/www/f/16k.bin`, fill(FILE_16K));
  await Deno.writeFile(`${dir}/www/f/1m.bin`, fill(FILE_1M));
  for (const name of ["member-a", "member-b", "nginx"]) {
    for (const t of ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]) {
      await Deno.mkdir(`${dir}/${name}-tmp/${t}`, { recursive: true });
    }
  }
  await Deno.writeTextFile(`${dir}/member-a.conf`, memberNginxConf(l, 0));
  await Deno.writeTextFile(`${dir}/member-b.conf`, memberNginxConf(l, 1));
  await Deno.writeTextFile(`${dir}/nginx.conf`, proxyNginxConf(l));
  await Deno.writeTextFile(`${dir}/haproxy.cfg`, haproxyConf(l));
  await Deno.writeTextFile(`${dir}/scalwsd.yaml`, scalwsdYaml(l));
  await Deno.writeTextFile(`${dir}/post.lua`, postLua(POST_BYTES));
  await Deno.writeTextFile(`${dir}/cookie.lua`, cookieLua(l.affinity));

  const cores = navigator.hardwareConcurrency;
  const load = Deno.loadavg();
  if (load[0] > 0.5) {
    console.log(
      `bench: warning: load average ${
        load[0].toFixed(2)
      } before starting; other work skews the figures`,
    );
  }
  console.log(
    `bench: ${cores} cores, nothing pinned: wrk (${opt.threads} threads), the proxy and the member share them; ` +
      `${opt.warmupS}s warm-up + ${opt.durationS}s per run, ${opt.repeat} run(s) per cell`,
  );

  const alive = (child: Deno.ChildProcess) => async () => {
    const s = await Promise.race([child.status, Promise.resolve(null)]);
    return s === null;
  };
  const nginxArgs = (
    name: string,
  ) => ["-p", dir, "-e", `${dir}/${name}.err.log`, "-c", `${dir}/${name}.conf`];

  // Members first, then the proxies in front of them.
  for (const [i, name] of [[0, "member-a"], [1, "member-b"]] as const) {
    const child = await procs.spawn(name, bin.nginx, nginxArgs(name), `${dir}/${name}.log`);
    await waitReady(`http://127.0.0.1:${l.members[i]}/`, 10_000, alive(child));
  }
  const children = new Map<ServerName, Deno.ChildProcess>();
  for (const server of opt.servers) {
    let child: Deno.ChildProcess;
    if (server === "scalwsd") {
      const prof = opt.profile ? ["--cpu-prof", `--cpu-prof-dir=${OUT_DIR}prof`, "--cpu-prof-interval=250"] : [];
      if (opt.profile) await Deno.mkdir(`${OUT_DIR}prof`, { recursive: true });
      child = await procs.spawn(
        server,
        Deno.execPath(),
        ["run", "--allow-all", ...prof, MAIN_TS, "run", "--config", `${dir}/scalwsd.yaml`],
        `${dir}/scalwsd.log`,
      );
    } else if (server === "nginx") {
      child = await procs.spawn(server, bin.nginx, nginxArgs("nginx"), `${dir}/nginx.log`);
    } else {
      child = await procs.spawn(
        server,
        bin.haproxy,
        ["-db", "-f", `${dir}/haproxy.cfg`],
        `${dir}/haproxy.log`,
      );
    }
    children.set(server, child);
    await waitReady(`http://127.0.0.1:${ports[server]}/`, 30_000, alive(child));
    await verify(server, ports[server], l);
  }

  /** The process whose RSS is the server's: scalwsd's Deno, nginx's worker, HAProxy itself. */
  const rssOf = async (server: ServerName): Promise<number | undefined> => {
    const pid = children.get(server)!.pid;
    if (server !== "nginx") return await rssKiB(pid);
    let sum: number | undefined;
    for (const w of await childPids(pid)) sum = (sum ?? 0) + ((await rssKiB(w)) ?? 0);
    return sum;
  };
  /** The process doing the proxying: nginx's single worker, else the spawned process. */
  const workPid = new Map<ServerName, number>();
  for (const s of opt.servers) {
    const pid = children.get(s)!.pid;
    workPid.set(s, s === "nginx" ? (await childPids(pid))[0] ?? pid : pid);
  }
  const hz = await clockTicks();
  const rssIdle = new Map<ServerName, number | undefined>();
  for (const s of opt.servers) rssIdle.set(s, await rssOf(s));
  const rssAfter512 = new Map<ServerName, number | undefined>();

  const wrk = async (s: Scenario, server: ServerName, secs: number): Promise<WrkResult> => {
    const args = [
      `-t${Math.min(opt.threads, s.connections)}`,
      `-c${s.connections}`,
      `-d${secs}s`,
      "--timeout",
      "5s",
      "--latency",
    ];
    for (const h of s.headers ?? []) args.push("-H", h);
    if (s.script !== undefined) args.push("-s", `${dir}/${s.script}.lua`);
    args.push(`http://127.0.0.1:${ports[server]}${s.path}`);
    const out = await procs.output("wrk", bin.wrk, args);
    if (out.code !== 0) {
      throw new Error(`wrk failed (exit ${out.code}) on ${s.name}/${server}: ${out.stderr.trim()}`);
    }
    return parseWrk(out.stdout);
  };

  const cells: Cell[] = [];
  for (const s of opt.scenarios) {
    const servers = opt.servers.filter((x) => s.servers === undefined || s.servers.includes(x));
    const runs = new Map<ServerName, Run[]>(servers.map((x) => [x, []]));
    for (let rep = 0; rep < opt.repeat; rep++) {
      for (const server of servers) {
        if (opt.warmupS > 0) await wrk(s, server, opt.warmupS);
        const pid = workPid.get(server)!;
        const before = await cpuTicks(pid);
        const r: Run = await wrk(s, server, opt.durationS);
        const after = await cpuTicks(pid);
        if (before !== undefined && after !== undefined && r.requests > 0) {
          const cpuS = (after - before) / hz;
          r.cpuUsPerReq = (cpuS * 1e6) / r.requests;
          r.cpuPct = (100 * cpuS) / (r.seconds || opt.durationS);
        }
        runs.get(server)!.push(r);
        if (s.name === "get-512") rssAfter512.set(server, await rssOf(server));
        const dead = await procs.exited();
        if (dead.length > 0) throw new Error(`Exited during ${s.name}: ${dead.join(", ")}`);
        console.log(
          `  ${s.name.padEnd(12)} ${server.padEnd(8)} ${
            Math.round(r.requestsPerSec).toString().padStart(7)
          } req/s` +
            `  p99 ${r.p99Ms.toFixed(2)} ms  cpu ${r.cpuUsPerReq?.toFixed(1) ?? "?"} us/req` +
            `${errorCount(r) > 0 ? `  errors ${errorCount(r)}` : ""}`,
        );
      }
    }
    for (const server of servers) {
      const all = runs.get(server)!;
      cells.push({ scenario: s.name, server, result: median(all), runs: all });
    }
  }

  const rows: Row[] = cells.map((c) => ({
    scenario: c.scenario,
    server: c.server,
    requestsPerSec: c.result.requestsPerSec,
    p99Ms: c.result.p99Ms,
    errors: errorCount(c.result),
    cpuUsPerReq: c.result.cpuUsPerReq,
    cpuPct: c.result.cpuPct,
  }));
  console.log("");
  console.log(renderTable(rows));

  const rate = (scenario: string) =>
    rows.find((r) => r.scenario === scenario && r.server === "scalwsd")?.requestsPerSec;
  const single = rate("get-64");
  const poolLines: string[] = [];
  for (const p of ["pool-1", "pool-rr", "pool-cookie"]) {
    const v = rate(p);
    if (single !== undefined && v !== undefined) {
      const ratio = v / single;
      poolLines.push(
        `  ${p}: ${ratio.toFixed(2)}x${ratio < 0.9 ? "  (below the 0.9 target)" : ""}`,
      );
    }
  }
  if (poolLines.length > 0) {
    console.log("\nscalwsd pool vs single-address form (get-64), req/s ratio:");
    console.log(poolLines.join("\n"));
  }
  const rssLine = (m: Map<ServerName, number | undefined>) =>
    opt.servers.filter((s) => m.has(s)).map((s) => `${s} ${mib(m.get(s))}`).join(", ");
  console.log(`\nRSS idle: ${rssLine(rssIdle)} (nginx: its worker)`);
  if (rssAfter512.size > 0) console.log(`RSS after get-512: ${rssLine(rssAfter512)}`);

  // Profiling: scalwsd writes its profile when it exits, so stop it before reading.
  let profile: { file: string; summary: ProfileSummary } | undefined;
  if (opt.profile) {
    await procs.stop(children.get("scalwsd")!, 30_000);
    const file = newestProfile(`${OUT_DIR}prof`);
    if (file === undefined) {
      console.error("bench: scalwsd wrote no .cpuprofile");
    } else {
      const summary = summarize(JSON.parse(await Deno.readTextFile(file)), 25, denoEmitResolver());
      console.log(`\nscalwsd CPU profile ${file}:\n${formatSummary(summary)}`);
      profile = { file, summary };
    }
  }

  const record = {
    date: new Date().toISOString(),
    machine: {
      cores,
      os: Deno.build.os,
      kernel: Deno.osRelease(),
      pinned: false,
      loadavgAtStart: load,
    },
    versions: {
      deno: Deno.version.deno,
      nginx: await firstLine(procs, bin.nginx, ["-v"]),
      haproxy: await firstLine(procs, bin.haproxy, ["-v"]),
      wrk: await firstLine(procs, bin.wrk, ["-v"]),
    },
    settings: {
      durationS: opt.durationS,
      warmupS: opt.warmupS,
      repeat: opt.repeat,
      wrkThreads: opt.threads,
      profile: opt.profile,
      nginxCookiePool: `hash $cookie_${COOKIE} consistent`,
      haproxyCookiePool: `cookie ${COOKIE} insert indirect nocache (scalwsd's affinity values)`,
    },
    results: cells.map((c) => ({
      ...c,
      ratioToNginx: ratioToNginx(
        rows,
        rows.find((r) => r.scenario === c.scenario && r.server === c.server)!,
      ),
    })),
    rssKiB: { idle: Object.fromEntries(rssIdle), after512: Object.fromEntries(rssAfter512) },
    profile,
  };
  await Deno.mkdir(OUT_DIR, { recursive: true });
  const stamp = record.date.replace(/[:.]/g, "-");
  const outFile = `${OUT_DIR}bench-${stamp}.json`;
  await Deno.writeTextFile(outFile, JSON.stringify(record, null, 2) + "\n");
  console.log(`\nresults: ${outFile}`);
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
