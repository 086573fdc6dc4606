/**
 * `deno task bench`: scalwsd, nginx (one worker) and HAProxy (one thread) side by side, each
 * proxying to the same nginx members on loopback, measured by the same wrk scenarios. Prints a
 * table (req/s, p99, ratio to nginx, proxy CPU per request, member connections opened), RSS
 * after the 512-connection run, and writes JSON to bench/out/. The TLS scenarios load
 * scalwsd's and nginx's own TLS listeners with h2load instead. See bench/README.md.
 *
 *   deno task bench [--quick] [--duration 5s] [--warmup 2s] [--only get-64,pool-rr]
 *                   [--servers scalwsd,nginx] [--repeat 1] [--keepalive N] [--profile] [--keep]
 *   deno task bench php-apps [...]   WordPress and DokuWiki beside nginx (bench/php_apps.ts)
 *   deno task bench h2-download [...]   30 MB over HTTP/2, 64 KiB windows (bench/h2_download.ts)
 */

import { parseArgs } from "node:util";
import { AffinityKey, affinityValue } from "../src/upstream/affinity.ts";
import {
  type BenchLayout,
  COOKIE,
  cookieLua,
  fpmConf,
  haproxyConf,
  HELLO_JS,
  HELLO_PHP,
  memberNginxConf,
  postLua,
  proxyNginxConf,
  scalwsdYaml,
  smallBody,
  STATUS_PATH,
  TLS_BODY,
  TLS_HOST,
  type TlsLayout,
  tracedLua,
  varnishArgs,
  varnishVcl,
} from "./configs.ts";
import { derive, type Derived, type Probe, snapshot, waitQuiet } from "./measure.ts";
import {
  denoEmitResolver,
  formatSummary,
  newestProfile,
  type ProfileSummary,
  summarize,
} from "./prof_top.ts";
import {
  childPids,
  clockTicks,
  findExecutable,
  freePorts,
  Procs,
  rssKiB,
  waitReady,
} from "./procs.ts";
import {
  fairKeepalive,
  keepsAlive,
  runsOn,
  type Scenario,
  selectScenarios,
  selectServers,
  type ServerName,
  UNFAIR_CONNS_PER_1K,
} from "./scenarios.ts";
import { markUnfair, ratioToNginx, renderTable, type Row } from "./table.ts";
import { FILE_16K, FILE_1M, POST_BYTES, verify, verifyCache } from "./verify.ts";
import { closeAll, type Held, holdIdle, holdIdleTls } from "./idle.ts";
import { parseWrk, type WrkResult } from "./wrk_output.ts";
import {
  type H2loadResult,
  logTimesMs,
  parseH2load,
  sumH2load,
  withPercentiles,
} from "./h2load_output.ts";
import { h2loadArgs, type H2loadRun, makeCertificates, resumeCount, tlsPort } from "./tls_load.ts";

/** Someone else's CPU use (% of a core) above which a run is flagged as disturbed. */
const DISTURBED_PCT = 15;

/** How long after get-512 the settled RSS is read. */
const SETTLE_MS = 6_000;

/** scalwsd's RSS targets around get-512: at its end (issue 13), and settled (issue 6). */
const RSS_END_512_MIB = 120;
const RSS_SETTLED_512_MIB = 80;

const USAGE = `usage: deno task bench [options]
       deno task bench php-apps [options]   (WordPress and DokuWiki: bench/php_apps.ts)
       deno task bench h2-download [--rounds N] [--mib N] [--parallel N]   (bench/h2_download.ts)
  --duration D    measured time per run (default 5s; --quick: 3s)
  --warmup D      warm-up before each run (default 2s; --quick: 1s)
  --quick         shorter runs
  --only LIST     scenarios, comma-separated (default: all)
  --servers LIST  scalwsd,nginx,haproxy,varnish,floor (default: all; Varnish runs only the
                  cache scenarios, floor only the single-member ones)
  --repeat N      runs per cell, the median by req/s is reported (default 1)
  --retries N     runs again when other processes used over ${DISTURBED_PCT}% of a core (default 2)
  --quiet-wait S  before each run, wait up to S seconds for the machine to be idle (default 20)
  --threads N     wrk threads (default 2)
  --keepalive N   idle connections to members each proxy keeps (default: the most client
                  connections of a selected scenario, at least 64; a keep-alive scenario in which
                  a proxy opens over ${UNFAIR_CONNS_PER_1K} member connections per 1,000 requests is marked unfair)
  --profile       scalwsd alone under --cpu-prof (default scenario get-64); prints its top functions;
                  with --servers scalwsd,floor the floor is profiled too (to bench/out/prof/floor/)
  --pin           the proxy on CPU 0, members and wrk on CPU 1 (taskset): the proxy alone on its
                  core, so that its cost is not mixed with the scheduling of the others
  --interleave    with --repeat: every scenario once per round, rather than all rounds of one
                  scenario before the next (pairs runs for ratios such as pool against get-64)
  --keep          keep the temporary directory (configs, logs)`;

const MAIN_TS = new URL("../main.ts", import.meta.url).pathname;
const OUT_DIR = new URL("./out/", import.meta.url).pathname;
const FLOOR_TS = new URL("./floor.ts", import.meta.url).pathname;

interface Options {
  durationS: number;
  warmupS: number;
  scenarios: Scenario[];
  servers: ServerName[];
  repeat: number;
  retries: number;
  quietWaitS: number;
  threads: number;
  keepalive: number;
  profile: boolean;
  interleave: boolean;
  pin: boolean;
  keep: boolean;
}

/** Seconds from `10s`, `10`, `1500ms`, `1m`; throws naming the option when malformed. */
function seconds(text: string, option: string, min: number): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  const n = m === null ? NaN : Number(m[1]);
  const s = m === null ? NaN : m[2] === "ms" ? n / 1000 : m[2] === "m" ? n * 60 : n;
  if (!(s >= min)) {
    throw new Error(`Invalid --${option} "${text}": expected a duration of at least ${min}s`);
  }
  // wrk takes whole seconds.
  return Math.round(s);
}

function int(text: string, option: string, min: number, max: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`Invalid --${option} "${text}": expected ${min} to ${max}`);
  }
  return n;
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
      retries: { type: "string", default: "2" },
      "quiet-wait": { type: "string", default: "20" },
      threads: { type: "string", default: "2" },
      keepalive: { type: "string" },
      profile: { type: "boolean", default: false },
      keep: { type: "boolean", default: false },
      interleave: { type: "boolean", default: false },
      pin: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) return null;
  const profile = values.profile;
  const scenarios = selectScenarios(values.only ?? (profile ? "get-64" : undefined));
  return {
    durationS: seconds(values.duration ?? (values.quick ? "3s" : "5s"), "duration", 1),
    warmupS: seconds(values.warmup ?? (values.quick ? "1s" : "2s"), "warmup", 0),
    // Profiling looks at scalwsd alone, by default under the headline load.
    scenarios,
    servers: profile ? profiled(values.servers) : selectServers(values.servers),
    repeat: int(values.repeat, "repeat", 1, 100),
    retries: int(values.retries, "retries", 0, 10),
    quietWaitS: int(values["quiet-wait"], "quiet-wait", 0, 3600),
    threads: int(values.threads, "threads", 1, 64),
    keepalive: values.keepalive === undefined
      ? fairKeepalive(scenarios)
      : int(values.keepalive, "keepalive", 1, 1024),
    profile,
    keep: values.keep,
    interleave: values.interleave,
    pin: values.pin,
  };
}

/** The servers `--profile` runs: scalwsd, and the floor when asked for. */
function profiled(list: string | undefined): ServerName[] {
  if (list === undefined) return ["scalwsd"];
  const chosen = selectServers(list).filter((s) => s === "scalwsd" || s === "floor");
  if (chosen.length === 0) throw new Error("--profile runs scalwsd and floor only");
  return chosen;
}

interface Tools {
  wrk: string;
  nginx: string;
  haproxy: string;
  /** Only looked for when a selected scenario runs on Varnish. */
  varnishd?: string;
  /** Only looked for when a TLS scenario is selected. */
  h2load?: string;
  openssl?: string;
}

/** The wrk, nginx and haproxy executables, or an error naming every missing one. */
function tools(): Tools {
  const found = {
    wrk: findExecutable("wrk"),
    nginx: findExecutable("nginx"),
    haproxy: findExecutable("haproxy"),
  };
  const missing = Object.entries(found).filter(([, v]) => v === undefined).map(([k]) => k);
  if (missing.length > 0) {
    throw new Error(
      `Missing ${
        missing.join(", ")
      }: the bench needs wrk, nginx and haproxy on PATH or in /usr/sbin ` +
        `(Debian: apt-get install wrk nginx haproxy)`,
    );
  }
  return found as Tools;
}

/** h2load and openssl for the TLS scenarios, or an error saying how to get them. */
function tlsTools(): { h2load: string; openssl: string } {
  const h2load = findExecutable("h2load");
  const openssl = findExecutable("openssl");
  if (h2load === undefined || openssl === undefined) {
    throw new Error(
      "the TLS scenarios need h2load and openssl (Debian: apt-get install nghttp2-client openssl)",
    );
  }
  return { h2load, openssl };
}

/** Debian's varnishd, or an error saying how to get it. */
function varnishd(): string {
  const v = findExecutable("varnishd");
  if (v === undefined) {
    throw new Error("the Varnish runs need varnishd (Debian: apt-get install varnish)");
  }
  return v;
}

async function firstLine(procs: Procs, cmd: string, args: string[]): Promise<string> {
  try {
    const out = await procs.output("version", cmd, args);
    return (out.stdout + out.stderr).split("\n").find((l) => l.trim() !== "")?.trim() ?? "";
  } catch {
    return "";
  }
}

/** What an h2load run adds to a wrk-shaped one: the TLS session and the handshake's times. */
type TlsFacts = Pick<
  H2loadResult,
  "tlsProtocol" | "cipher" | "tempKey" | "alpn" | "connectMeanMs" | "ttfbMeanMs" | "dataBytes"
>;

/** One load run, wrk's or h2load's, in wrk's shape. */
type LoadResult = WrkResult & { tls?: TlsFacts };

/** One measured run: wrk's (or h2load's) report plus the figures read around it. */
type Run = LoadResult & Derived & {
  /** Requests that reached member a during the measured run (scenarios that count them). */
  memberRequests?: number;
};

/** An h2load report in wrk's shape (its failures count as read errors), with its TLS facts. */
function fromH2load(r: H2loadResult): LoadResult {
  return {
    requestsPerSec: r.requestsPerSec,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
    requests: r.requests,
    seconds: r.seconds,
    non2xx: r.non2xx,
    connectErrors: 0,
    readErrors: r.errored,
    writeErrors: 0,
    timeouts: r.timeouts,
    transferPerSec: "",
    tls: {
      tlsProtocol: r.tlsProtocol,
      cipher: r.cipher,
      tempKey: r.tempKey,
      alpn: r.alpn,
      connectMeanMs: r.connectMeanMs,
      ttfbMeanMs: r.ttfbMeanMs,
      dataBytes: r.dataBytes,
    },
  };
}

interface Cell {
  scenario: string;
  server: ServerName;
  /** The run reported (median by req/s). */
  result: Run;
  runs: Run[];
}

/** The median run by req/s, among the undisturbed runs when there are any. */
function median(runs: Run[]): Run {
  const clean = runs.filter((r) => (r.otherPct ?? 0) <= DISTURBED_PCT);
  const sorted = [...(clean.length > 0 ? clean : runs)].sort((x, y) =>
    x.requestsPerSec - y.requestsPerSec
  );
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

function errorCount(r: WrkResult): number {
  return r.non2xx + r.connectErrors + r.readErrors + r.writeErrors + r.timeouts;
}

/** One line per run while the bench goes. */
function progress(scenario: string, server: string, r: Run): string {
  const f = (n: number | undefined, d = 1) => n === undefined ? "?" : n.toFixed(d);
  return `  ${scenario.padEnd(12)} ${server.padEnd(8)} ${
    f(r.requestsPerSec, 0).padStart(7)
  } req/s` +
    `  p99 ${f(r.p99Ms, 2)} ms  cpu ${f(r.cpuUsPerReq)} us/req (usr ${f(r.userUsPerReq)}, ` +
    `${f(r.cpuPct, 0)}% of a core)  member conns/1k ${f(r.upstreamConnsPer1k)}` +
    `  others' cpu ${f(r.otherPct, 0)}%` + (errorCount(r) > 0 ? `  errors ${errorCount(r)}` : "") +
    (r.memberRequests !== undefined ? `  member requests ${r.memberRequests}` : "");
}

function mib(kib: number | undefined): string {
  return kib === undefined ? "?" : `${(kib / 1024).toFixed(1)} MiB`;
}

/** Requests member a has served so far (nginx stub_status), this read's own included. */
async function memberRequestCount(port: number): Promise<number | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${STATUS_PATH}`, {
      signal: AbortSignal.timeout(2000),
    });
    const m = /accepts handled requests\s+\d+\s+\d+\s+(\d+)/.exec(await res.text());
    return m === null ? undefined : Number(m[1]);
  } catch {
    return undefined;
  }
}

/**
 * Connections accepted so far by the member on `port` (nginx stub_status), this read's own
 * connection included: a fresh one each time, so that every read adds exactly one.
 */
async function accepts(port: number): Promise<number | undefined> {
  let conn: Deno.TcpConn | undefined;
  try {
    conn = await Deno.connect({ hostname: "127.0.0.1", port });
    const req = `GET ${STATUS_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;
    await conn.write(new TextEncoder().encode(req));
    const text = await new Response(conn.readable).text();
    conn = undefined; // the readable closed it
    const m = /accepts handled requests\s+(\d+)/.exec(text);
    return m === null ? undefined : Number(m[1]);
  } catch {
    return undefined;
  } finally {
    try {
      conn?.close();
    } catch {
      // Already closed.
    }
  }
}

/**
 * The TLS scenarios' lines below the table: scalwsd's CPU per request over nginx's against the
 * issue's target, ECDSA P-256 against RSA-2048 for full handshakes, and what was negotiated.
 */
function tlsSummary(scenarios: readonly Scenario[], rows: readonly Row[], cells: readonly Cell[]) {
  const lines: string[] = [];
  const cpu = (scenario: string, server: string) =>
    rows.find((r) => r.scenario === scenario && r.server === server)?.cpuUsPerReq;
  for (const s of scenarios) {
    if (s.tls === undefined) continue;
    const [a, b] = [cpu(s.name, "scalwsd"), cpu(s.name, "nginx")];
    if (a === undefined || b === undefined || b === 0) continue;
    const x = a / b;
    lines.push(
      `  ${s.name.padEnd(15)} cpu/req ${a.toFixed(0)} us against ${b.toFixed(0)} us: ` +
        `${x.toFixed(2)}x (target at most ${s.tls.cpuTarget})` +
        (x > s.tls.cpuTarget ? "  (above the target)" : ""),
    );
  }
  for (const server of ["scalwsd", "nginx"]) {
    const [ec, rsa] = [cpu("tls-full-ecdsa", server), cpu("tls-full", server)];
    if (ec === undefined || rsa === undefined || rsa === 0) continue;
    lines.push(
      `  full handshake, ECDSA P-256 against RSA-2048, ${server}: ${ec.toFixed(0)} us against ` +
        `${rsa.toFixed(0)} us (${(ec / rsa).toFixed(2)}x)`,
    );
  }
  for (const c of cells) {
    const t = c.result.tls;
    if (t === undefined) continue;
    const ms = (n: number) => Number.isNaN(n) ? "?" : n.toFixed(2);
    lines.push(
      `  ${c.scenario}/${c.server}: ${t.tlsProtocol} ${t.cipher} ${t.tempKey} ${t.alpn}; mean ` +
        `connect+handshake ${ms(t.connectMeanMs)} ms, first byte ${ms(t.ttfbMeanMs)} ms`,
    );
  }
  return lines;
}

async function main(argv: string[]): Promise<number> {
  // `deno task bench php-apps ...`: WordPress and DokuWiki against nginx (bench/php_apps.ts).
  if (argv[0] === "php-apps") return await (await import("./php_apps.ts")).main(argv.slice(1));
  // `deno task bench h2-download ...`: a 30 MB HTTP/2 download with 64 KiB windows against nginx.
  if (argv[0] === "h2-download") {
    return await (await import("./h2_download.ts")).main(argv.slice(1));
  }
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
  let bin: Tools;
  try {
    bin = tools();
  } catch (err) {
    console.error(`bench: ${(err as Error).message}`);
    return 1;
  }

  const procs = new Procs();
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-bench-" });
  let keep = opt.keep;
  let cleaning: Promise<void> | null = null;
  const cleanup = () =>
    cleaning ??= (async () => {
      await procs.stopAll();
      if (!keep) await Deno.remove(dir, { recursive: true }).catch(() => {});
    })();
  // Ctrl-C (or a kill) still stops every process the bench started.
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
      keep = true;
      console.error(`bench: exited early: ${dead.join(", ")}\nbench: logs kept in ${dir}`);
    }
    return 1;
  } finally {
    await cleanup();
    for (const s of signals) Deno.removeSignalListener(s, onSignal);
  }
}

/** Writes configs, scripts and the members' files into `dir`. */
async function prepare(l: BenchLayout): Promise<void> {
  const dir = l.dir;
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
  if (l.varnish !== undefined) await Deno.writeTextFile(`${dir}/varnish.vcl`, varnishVcl(l));
  await Deno.writeTextFile(`${dir}/scalwsd.yaml`, scalwsdYaml(l));
  await Deno.writeTextFile(`${dir}/post.lua`, postLua(POST_BYTES));
  await Deno.writeTextFile(`${dir}/cookie.lua`, cookieLua(l.affinity));
  await Deno.writeTextFile(`${dir}/traced-1pct.lua`, tracedLua(100));
  if (l.fpmSocket !== undefined) {
    await Deno.mkdir(`${dir}/www/php`, { recursive: true });
    await Deno.writeTextFile(`${dir}/www/php/hello.php`, HELLO_PHP);
    await Deno.writeTextFile(`${dir}/fpm.conf`, fpmConf(l));
  }
  if (l.nodePort !== undefined) await Deno.writeTextFile(`${dir}/hello.js`, HELLO_JS);
}

/** Debian's PHP-FPM (`php-fpm8.2` and the like), or undefined. */
function phpFpm(): string | undefined {
  for (const d of ["/usr/sbin", "/usr/local/sbin", "/usr/bin"]) {
    try {
      const names = [...Deno.readDirSync(d)].map((e) => e.name)
        .filter((n) => /^php-fpm[0-9.]*$/.test(n)).sort().reverse();
      if (names.length > 0) return `${d}/${names[0]}`;
    } catch {
      // Try the next one.
    }
  }
  return undefined;
}

/** A Unix socket accepts connections. */
async function socketReady(path: string, ms: number, alive: () => Promise<boolean>) {
  const end = Date.now() + ms;
  for (;;) {
    try {
      (await Deno.connect({ transport: "unix", path })).close();
      return;
    } catch {
      if (Date.now() > end || !(await alive())) throw new Error(`${path} never accepted`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

function running(child: Deno.ChildProcess): () => Promise<boolean> {
  return async () => (await Promise.race([child.status, Promise.resolve(null)])) === null;
}

async function bench(opt: Options, bin: Tools, procs: Procs, dir: string): Promise<number> {
  const [pa, pb, ps, pn, ph, pnode, pv, pf] = freePorts(8);
  if (opt.servers.includes("varnish") && opt.scenarios.some((s) => runsOn(s, "varnish"))) {
    bin.varnishd = varnishd();
  }
  // The TLS scenarios: certificates made afresh in bench/out/tls, listeners on both servers.
  let tls: TlsLayout | undefined;
  if (opt.scenarios.some((s) => s.tls !== undefined || s.idleTls !== undefined)) {
    Object.assign(bin, tlsTools());
    const [r1, e1, r2, e2, r3, e3] = freePorts(6);
    tls = {
      certDir: `${OUT_DIR}tls`,
      scalwsd: { rsa: r1, ecdsa: e1 },
      nginx: { rsa: r2, ecdsa: e2 },
      nginxNoResume: { rsa: r3, ecdsa: e3 },
    };
    await makeCertificates(bin.openssl!, tls.certDir);
  }
  const wants = (name: string) => opt.scenarios.some((s) => s.name === name);
  const wantsPhp = wants("php") || wants("php-16");
  const fpm = wantsPhp ? phpFpm() : undefined;
  if (wantsPhp && fpm === undefined) {
    throw new Error("the php scenario needs PHP-FPM (Debian: apt-get install php-fpm)");
  }
  const redisServer = wants("limited-get-64") ? findExecutable("redis-server") : undefined;
  if (wants("limited-get-64") && redisServer === undefined) {
    throw new Error("the limited-get-64 scenario needs redis-server (Debian: redis-server)");
  }
  const node = wants("node") ? findExecutable("node") : undefined;
  if (wants("node") && node === undefined) throw new Error("the node scenario needs node");
  const key = AffinityKey.fromFile(`${dir}/affinity.key`);
  const l: BenchLayout = {
    dir,
    members: [pa, pb],
    scalwsd: ps,
    nginx: pn,
    haproxy: ph,
    ...(bin.varnishd !== undefined ? { varnish: pv } : {}),
    floor: pf,
    affinity: [affinityValue(key, `127.0.0.1:${pa}`), affinityValue(key, `127.0.0.1:${pb}`)],
    root: Deno.uid() === 0,
    keepalive: opt.keepalive,
    ...(fpm !== undefined ? { fpmSocket: `${dir}/fpm.sock` } : {}),
    ...(node !== undefined ? { nodePort: pnode } : {}),
    ...(redisServer !== undefined ? { redisSocket: `${dir}/redis.sock` } : {}),
    ...(wants("get-64-traced") || wants("get-64-traced-1pct") ? { tracing: true } : {}),
    ...(tls !== undefined ? { tls } : {}),
  };
  const ports: Record<ServerName, number> = {
    scalwsd: ps,
    nginx: pn,
    haproxy: ph,
    varnish: pv,
    floor: pf,
  };
  await prepare(l);

  const cores = navigator.hardwareConcurrency;
  if (opt.pin && cores < 2) throw new Error("--pin needs at least 2 CPUs");
  const load = Deno.loadavg();
  console.log(
    `bench: ${cores} cores, ` +
      (opt.pin
        ? `pinned: the proxy on CPU 0, wrk (${opt.threads} threads) and the members on CPU 1; `
        : `nothing pinned: wrk (${opt.threads} threads), the proxy and the members share them; `) +
      `${opt.warmupS}s warm-up + ${opt.durationS}s per run, ${opt.repeat} run(s) per ` +
      `cell, ${opt.keepalive} idle member connections per proxy`,
  );
  const fair = fairKeepalive(opt.scenarios);
  if (opt.keepalive < fair) {
    console.log(
      `bench: warning: --keepalive ${opt.keepalive} is below the ${fair} client connections of ` +
        `a selected scenario: proxies will reopen member connections there`,
    );
  }
  if (load[0] > 0.5) {
    console.log(`bench: warning: load average ${load[0].toFixed(2)} before starting`);
  }

  // With --pin: the proxy measured alone on CPU 0, everything else on CPU 1.
  const proxyCpus = opt.pin ? "0" : undefined;
  const sideCpus = opt.pin ? "1" : undefined;
  // Members first, then the proxies in front of them.
  const nginxArgs = (
    name: string,
  ) => ["-p", dir, "-e", `${dir}/${name}.err.log`, "-c", `${dir}/${name}.conf`];
  const memberPids: number[] = [];
  for (const [i, name] of [[0, "member-a"], [1, "member-b"]] as const) {
    const child = await procs.spawn(
      name,
      bin.nginx,
      nginxArgs(name),
      `${dir}/${name}.log`,
      sideCpus,
    );
    await waitReady(`http://127.0.0.1:${l.members[i]}/`, 10_000, running(child));
    memberPids.push(child.pid);
  }
  // The applications of the php and node scenarios, shared by both proxies (nginx's node).
  if (fpm !== undefined) {
    const root = Deno.uid() === 0 ? ["-R"] : [];
    const child = await procs.spawn(
      "php-fpm",
      fpm,
      ["-n", "-F", "-y", `${dir}/fpm.conf`, ...root],
      `${dir}/fpm.log`,
      sideCpus,
    );
    await socketReady(l.fpmSocket!, 10_000, running(child));
    memberPids.push(child.pid, ...(await childPids(child.pid)));
  }
  if (redisServer !== undefined) {
    const child = await procs.spawn(
      "redis",
      redisServer,
      ["--port", "0", "--unixsocket", l.redisSocket!, "--save", "", "--appendonly", "no"],
      `${dir}/redis.log`,
      sideCpus,
    );
    await socketReady(l.redisSocket!, 10_000, running(child));
    memberPids.push(child.pid);
  }
  if (node !== undefined) {
    const child = await procs.spawn(
      "node",
      "/usr/bin/env",
      [`PORT=${pnode}`, node, `${dir}/hello.js`],
      `${dir}/node.log`,
      sideCpus,
    );
    await waitReady(`http://127.0.0.1:${pnode}/`, 10_000, running(child));
    memberPids.push(child.pid);
  }
  /** One h2load run against a TLS listener; its report and its request times (log file). */
  const h2loadOnce = async (run: H2loadRun): Promise<[H2loadResult, number[]]> => {
    const logFile = `${dir}/h2load-requests.log`;
    await Deno.remove(logFile).catch(() => {});
    // h2load 1.52 can hang at the end of a run on a loaded machine: killed after a bound.
    const bound = String(Math.round((run.seconds ?? 30) * 3 + 60));
    const out = await procs.output(
      "h2load",
      "timeout",
      ["-s", "KILL", bound, bin.h2load!, ...h2loadArgs({ ...run, logFile })],
      sideCpus,
    );
    if (out.code === 137) throw new Error(`h2load hung (killed after ${bound} s)`);
    if (out.code !== 0) {
      throw new Error(`h2load failed (exit ${out.code}): ${(out.stderr || out.stdout).trim()}`);
    }
    const r = parseH2load(out.stdout);
    const times = logTimesMs(await Deno.readTextFile(logFile).catch(() => ""));
    return [r, times];
  };

  /** Each TLS listener `server` is loaded on answers TLS_BODY over h1 (and h2 where asked). */
  const verifyTls = async (server: ServerName) => {
    for (const s of opt.scenarios) {
      if (s.tls === undefined || !runsOn(s, server)) continue;
      const port = tlsPort(l.tls!, server, s.tls);
      const load = { ...s.tls, connection: "full" as const };
      const [r] = await h2loadOnce({ port, load, clients: 1, threads: 1, requests: 1 });
      const alpn = s.tls.h2 ? "h2" : "http/1.1";
      if (
        r.requests !== 1 || r.non2xx !== 0 || r.dataBytes !== TLS_BODY.length || r.alpn !== alpn
      ) {
        throw new Error(
          `Sanity check failed for ${server} (${s.name}, TLS port ${port}): ${r.requests} ` +
            `answers, ${r.non2xx} outside 2xx/3xx, ${r.dataBytes} body bytes, ALPN "${r.alpn}"`,
        );
      }
    }
  };

  const children = new Map<ServerName, Deno.ChildProcess>();
  for (const server of opt.servers) {
    let child: Deno.ChildProcess;
    if (server === "scalwsd") {
      const prof = opt.profile
        ? ["--cpu-prof", `--cpu-prof-dir=${OUT_DIR}prof`, "--cpu-prof-interval=250"]
        : [];
      if (opt.profile) await Deno.mkdir(`${OUT_DIR}prof/floor`, { recursive: true });
      const args = [
        "run",
        "--allow-all",
        // As `deno task run`: reusePort, which TLS terminated on the public socket needs.
        "--unstable-net",
        ...prof,
        MAIN_TS,
        "run",
        "--config",
        `${dir}/scalwsd.yaml`,
      ];
      child = await procs.spawn(server, Deno.execPath(), args, `${dir}/scalwsd.log`, proxyCpus);
    } else if (server === "nginx") {
      child = await procs.spawn(
        server,
        bin.nginx,
        nginxArgs("nginx"),
        `${dir}/nginx.log`,
        proxyCpus,
      );
    } else if (server === "floor") {
      if (!opt.scenarios.some((s) => runsOn(s, "floor"))) continue;
      child = await procs.spawn(
        server,
        Deno.execPath(),
        [
          "run",
          "--allow-net",
          ...(opt.profile
            ? ["--cpu-prof", `--cpu-prof-dir=${OUT_DIR}prof/floor`, "--cpu-prof-interval=250"]
            : []),
          FLOOR_TS,
          String(pf),
          String(pa),
        ],
        `${dir}/floor.log`,
        proxyCpus,
      );
    } else if (server === "varnish") {
      if (bin.varnishd === undefined) continue;
      child = await procs.spawn(
        server,
        bin.varnishd,
        varnishArgs(l),
        `${dir}/varnish.log`,
        proxyCpus,
      );
    } else {
      child = await procs.spawn(
        server,
        bin.haproxy,
        ["-db", "-f", `${dir}/haproxy.cfg`],
        `${dir}/haproxy.log`,
        proxyCpus,
      );
    }
    children.set(server, child);
    await waitReady(`http://127.0.0.1:${ports[server]}/`, 30_000, running(child));
    if (server !== "varnish") await verify(server, ports[server], l);
    await verifyTls(server);
    if (opt.scenarios.some((s) => s.name.startsWith("cache") || s.countMemberRequests)) {
      if (opt.scenarios.some((s) => runsOn(s, server) && s.path.startsWith("/cache"))) {
        await verifyCache(server, ports[server], () => memberRequestCount(l.members[0]));
      }
    }
  }

  // The process doing the proxying: nginx's single worker, else the spawned process.
  const workPid = new Map<ServerName, number>();
  const started = opt.servers.filter((s) => children.has(s));
  for (const s of started) {
    const pid = children.get(s)!.pid;
    // nginx's single worker; varnishd's cache process (the child of its manager).
    const child = s === "nginx" || s === "varnish";
    workPid.set(s, child ? (await childPids(pid))[0] ?? pid : pid);
  }
  const rssOf = (s: ServerName) => rssKiB(workPid.get(s)!);
  const hz = await clockTicks();
  const rssIdle = new Map<ServerName, number | undefined>();
  for (const s of started) rssIdle.set(s, await rssOf(s));
  const rssAfterCache = new Map<ServerName, number | undefined>();
  const rssAfter512 = new Map<ServerName, number | undefined>();
  const rssSettled512 = new Map<ServerName, number | undefined>();
  const memberAccepts = async () => {
    const [x, y] = [await accepts(l.members[0]), await accepts(l.members[1])];
    return x === undefined || y === undefined ? undefined : x + y;
  };

  /** The request rate of each TLS `resume` cell's last run, to size the next one. */
  const lastRate = new Map<string, number>();

  /** `secs` of h2load on scenario `s`'s TLS listener of `server`. */
  const h2load = async (s: Scenario, server: ServerName, secs: number): Promise<LoadResult> => {
    const load = s.tls!;
    const run = {
      port: tlsPort(l.tls!, server, load),
      load,
      clients: s.connections,
      threads: opt.threads,
    };
    let r: H2loadResult;
    let times: number[];
    if (load.connection === "keep-alive") {
      [r, times] = await h2loadOnce({ ...run, seconds: secs });
    } else if (load.connection === "resume") {
      const key = `${s.name}/${server}`;
      const requests = resumeCount(lastRate.get(key), secs, s.connections);
      [r, times] = await h2loadOnce({ ...run, requests });
      lastRate.set(key, r.requestsPerSec);
    } else {
      // A new client never resumes: h2load again and again, one request per client, until
      // `secs` have passed. The rate is h2load's (its start-up left out); the CPU figures
      // divide by the wall time.
      const parts: H2loadResult[] = [];
      times = [];
      const start = performance.now();
      do {
        const [part, t] = await h2loadOnce({ ...run, requests: s.connections });
        parts.push(part);
        for (const x of t) times.push(x);
      } while (performance.now() - start < secs * 1000);
      r = { ...sumH2load(parts), seconds: (performance.now() - start) / 1000 };
    }
    // A timed run counts the answers of its main phase, and body bytes of the ones in flight.
    const slack = load.connection === "keep-alive" ? TLS_BODY.length * s.connections : 0;
    const failed = r.non2xx + r.errored + r.timeouts;
    if (failed === 0 && Math.abs(r.dataBytes - TLS_BODY.length * r.requests) > slack) {
      throw new Error(
        `${s.name}/${server}: ${r.dataBytes} body bytes for ${r.requests} answers ` +
          `(${TLS_BODY.length} each expected)`,
      );
    }
    return fromH2load(withPercentiles(r, times));
  };

  const wrk = async (s: Scenario, server: ServerName, secs: number): Promise<LoadResult> => {
    if (s.tls !== undefined) return await h2load(s, server, secs);
    const args = [`-t${Math.min(opt.threads, s.connections)}`, `-c${s.connections}`, `-d${secs}s`];
    args.push("--timeout", "5s", "--latency");
    for (const h of s.headers ?? []) args.push("-H", h);
    if (s.script !== undefined) args.push("-s", `${dir}/${s.script}.lua`);
    args.push(`http://127.0.0.1:${ports[server]}${s.path}`);
    const out = await procs.output("wrk", bin.wrk, args, sideCpus);
    if (out.code !== 0) {
      throw new Error(`wrk failed (exit ${out.code}) on ${s.name}/${server}: ${out.stderr.trim()}`);
    }
    return parseWrk(out.stdout);
  };

  /** One measured run of `s` on `server`; a run that others' CPU use disturbed is done again. */
  /** `limited-get-64`: Redis scripts run (EVALSHA and EVAL calls) so far. */
  const redisScripts = async (): Promise<number> => {
    const out = await new Deno.Command("redis-cli", {
      args: ["-s", l.redisSocket!, "INFO", "commandstats"],
      stdout: "piped",
      stderr: "null",
    }).output().catch(() => ({ stdout: new Uint8Array() }));
    const stats = new TextDecoder().decode(out.stdout);
    const calls = (name: string) =>
      Number(new RegExp(`^cmdstat_${name}:calls=(\\d+)`, "m").exec(stats)?.[1] ?? 0);
    return calls("evalsha") + calls("eval");
  };
  /** Redis round trips per request of each measured `limited-get-64` run. */
  const redisTrips: number[] = [];
  const measure = async (s: Scenario, server: ServerName): Promise<Run> => {
    const probe: Probe = {
      proxyPid: workPid.get(server)!,
      memberPids,
      benchPid: Deno.pid,
      accepts: memberAccepts,
      statusConns: 2,
    };
    // The least disturbed attempt counts.
    let best: Run | undefined;
    for (let attempt = 0; attempt <= opt.retries; attempt++) {
      if (opt.quietWaitS > 0) await waitQuiet(DISTURBED_PCT, opt.quietWaitS, hz);
      if (opt.warmupS > 0) await wrk(s, server, opt.warmupS);
      const reqBefore = s.countMemberRequests ? await memberRequestCount(l.members[0]) : undefined;
      const scriptsBefore = s.name === "limited-get-64" ? await redisScripts() : undefined;
      const before = await snapshot(probe);
      const w = await wrk(s, server, opt.durationS);
      if (scriptsBefore !== undefined) {
        redisTrips.push(((await redisScripts()) - scriptsBefore) / Math.max(1, w.requests));
      }
      const r: Run = {
        ...w,
        ...derive(before, await snapshot(probe), w, hz, probe.statusConns),
      };
      if (reqBefore !== undefined) {
        const reqAfter = await memberRequestCount(l.members[0]);
        // Less this read's own request and the two snapshots' stub_status reads on member a.
        if (reqAfter !== undefined) r.memberRequests = reqAfter - reqBefore - 1 - 2;
      }
      if (s.name === "cache-hit") rssAfterCache.set(server, await rssOf(server));
      if (s.name === "get-512") {
        rssAfter512.set(server, await rssOf(server));
        // scalwsd gives memory back after 3 s of quiet (src/observe/memory_trim.ts).
        await new Promise((r) => setTimeout(r, SETTLE_MS));
        rssSettled512.set(server, await rssOf(server));
      }
      const dead = await procs.exited();
      if (dead.length > 0) throw new Error(`Exited during ${s.name}: ${dead.join(", ")}`);
      const disturbed = (r.otherPct ?? 0) > DISTURBED_PCT;
      console.log(progress(s.name, server, r) + (disturbed ? "  (disturbed)" : ""));
      if (best === undefined || (r.otherPct ?? 0) < (best.otherPct ?? 0)) best = r;
      if (!disturbed) break;
    }
    return best!;
  };

  const serversOf = (s: Scenario) => started.filter((x) => runsOn(s, x));
  const loads = opt.scenarios.filter((s) => s.idle === undefined);
  const idleLines: string[] = [];
  for (const s of opt.scenarios) {
    if (s.idle === undefined) continue;
    for (const server of serversOf(s)) {
      const before = await rssOf(server);
      let conns: Held[];
      try {
        conns = s.idleTls !== undefined
          ? await holdIdleTls(
            tlsPort(l.tls!, server, {
              cert: s.idleTls,
              h2: false,
              connection: "keep-alive",
              cpuTarget: 1,
            }),
            TLS_HOST,
            TLS_BODY,
            s.idle,
          )
          : await holdIdle(ports[server], s.path, smallBody("a"), s.idle);
      } catch (err) {
        // A server out of descriptors (a relayed TLS connection holds three) is a result too.
        idleLines.push(`  ${s.name} ${server}: failed: ${(err as Error).message}`);
        console.log(`${s.name.padEnd(11)} ${server.padEnd(8)} ${idleLines.at(-1)!.trim()}`);
        await new Promise((r) => setTimeout(r, 2000));
        continue;
      }
      // Measured once quiet, as get-512 settled: scalwsd gives memory back after 3 s of quiet.
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      const after = await rssOf(server);
      closeAll(conns);
      await new Promise((r) => setTimeout(r, 1000));
      const grew = before === undefined || after === undefined ? undefined : after - before;
      idleLines.push(
        `  ${s.name} ${server}: ${mib(before)} -> ${mib(after)}` +
          (grew === undefined ? "" : ` (+${mib(grew)}, ${(grew / s.idle).toFixed(1)} KiB each)`),
      );
      console.log(`${s.name.padEnd(11)} ${server.padEnd(8)} ${idleLines.at(-1)!.trim()}`);
    }
  }
  const runs = new Map<string, Run[]>();
  const keepRun = (s: Scenario, server: ServerName, r: Run) => {
    const key = `${s.name}/${server}`;
    runs.set(key, [...(runs.get(key) ?? []), r]);
  };
  if (opt.interleave) {
    // Every scenario once per round: slow drifts of the machine hit all of them alike.
    for (let rep = 0; rep < opt.repeat; rep++) {
      for (const s of loads) {
        for (const server of serversOf(s)) keepRun(s, server, await measure(s, server));
      }
    }
  } else {
    for (const s of loads) {
      for (let rep = 0; rep < opt.repeat; rep++) {
        for (const server of serversOf(s)) keepRun(s, server, await measure(s, server));
      }
    }
  }
  const cells: Cell[] = [];
  for (const s of loads) {
    for (const server of serversOf(s)) {
      const all = runs.get(`${s.name}/${server}`)!;
      cells.push({ scenario: s.name, server, result: median(all), runs: all });
    }
  }

  const keepAliveNames = new Set(loads.filter(keepsAlive).map((s) => s.name));
  const rows: Row[] = markUnfair(
    cells.map((c) => ({
      scenario: c.scenario,
      server: c.server,
      requestsPerSec: c.result.requestsPerSec,
      p99Ms: c.result.p99Ms,
      errors: errorCount(c.result),
      cpuUsPerReq: c.result.cpuUsPerReq,
      userUsPerReq: c.result.userUsPerReq,
      sysUsPerReq: c.result.sysUsPerReq,
      cpuPct: c.result.cpuPct,
      upstreamConnsPer1k: c.result.upstreamConnsPer1k,
    })),
    (name) => keepAliveNames.has(name),
    UNFAIR_CONNS_PER_1K,
  );
  console.log("");
  console.log(renderTable(rows));
  const unfair = [...new Set(rows.filter((r) => r.unfair).map((r) => r.scenario))];
  if (unfair.length > 0) {
    console.log(
      `\nunfair (a proxy opened over ${UNFAIR_CONNS_PER_1K} member connections per 1,000 ` +
        `requests; not compared): ${unfair.join(", ")}; raise --keepalive (${opt.keepalive})`,
    );
  }
  const disturbed = cells.filter((c) => (c.result.otherPct ?? 0) > DISTURBED_PCT);
  if (disturbed.length > 0) {
    console.log(
      `\nwarning: other processes used over ${DISTURBED_PCT}% of a core during ` +
        disturbed.map((c) => `${c.scenario}/${c.server} (${c.result.otherPct!.toFixed(0)}%)`).join(
          ", ",
        ),
    );
  }

  const rate = (scenario: string) =>
    rows.find((r) => r.scenario === scenario && r.server === "scalwsd");
  const single = rate("get-64");
  const poolLines: string[] = [];
  for (const p of ["pool-1", "pool-rr", "pool-cookie"]) {
    const v = rate(p);
    if (single === undefined || v === undefined || single.unfair || v.unfair) continue;
    const ratio = v.requestsPerSec / single.requestsPerSec;
    const cpu = v.cpuUsPerReq !== undefined && single.cpuUsPerReq !== undefined
      ? `, cpu/req ${(v.cpuUsPerReq / single.cpuUsPerReq).toFixed(2)}x`
      : "";
    poolLines.push(
      `  ${p}: req/s ${ratio.toFixed(2)}x${cpu}${ratio < 0.9 ? "  (below the 0.9 target)" : ""}`,
    );
    // Interleaved rounds pair each pool run with the get-64 run of the same round.
    const mine = runs.get(`${p}/scalwsd`) ?? [];
    const base = runs.get("get-64/scalwsd") ?? [];
    if (opt.interleave && mine.length > 1 && mine.length === base.length) {
      const paired = mine.map((r, i) => r.requestsPerSec / base[i].requestsPerSec);
      const sorted = [...paired].sort((a, b) => a - b);
      poolLines.push(
        `    paired by round: ${paired.map((x) => x.toFixed(2)).join(" ")}; median ` +
          `${sorted[Math.floor(sorted.length / 2)].toFixed(2)}x`,
      );
    }
  }
  const limited = rate("limited-get-64");
  if (limited !== undefined && single !== undefined && l.redisSocket !== undefined) {
    const cpu = limited.cpuUsPerReq !== undefined && single.cpuUsPerReq !== undefined
      ? `cpu/req ${(limited.cpuUsPerReq / single.cpuUsPerReq).toFixed(2)}x (target at most 1.3), `
      : "";
    console.log("\nscalwsd limit_req in Redis (limited-get-64) against get-64:");
    console.log(
      `  ${cpu}p99 ${(limited.p99Ms / single.p99Ms).toFixed(2)}x (target at most 1.5), ` +
        `Redis round trips per request ${redisTrips.map((t) => t.toFixed(2)).join(", ")} ` +
        `(scripts run during each measured run over its requests)`,
    );
  }
  const tracedLines: string[] = [];
  for (const [name, target] of [["get-64-traced", 1.15], ["get-64-traced-1pct", 1.03]] as const) {
    const v = rate(name);
    if (v?.cpuUsPerReq === undefined || single?.cpuUsPerReq === undefined) continue;
    const x = v.cpuUsPerReq / single.cpuUsPerReq;
    tracedLines.push(
      `  ${name}: cpu/req ${x.toFixed(2)}x (target at most ${target})` +
        `${x > target ? "  (over the target)" : ""}, p99 ${(v.p99Ms / single.p99Ms).toFixed(2)}x`,
    );
  }
  if (tracedLines.length > 0) {
    console.log(
      "\nscalwsd tracing against get-64 (get-64 itself runs with tracing on, unsampled):",
    );
    console.log(tracedLines.join("\n"));
  }
  if (poolLines.length > 0) {
    console.log("\nscalwsd pools against the single-address form (get-64):");
    console.log(poolLines.join("\n"));
  }
  const cacheLines: string[] = [];
  const hit = rate("cache-hit");
  const fixed = rate("respond");
  const nginxHit = rows.find((r) => r.scenario === "cache-hit" && r.server === "nginx");
  if (hit !== undefined && fixed?.cpuUsPerReq !== undefined && hit.cpuUsPerReq !== undefined) {
    const x = hit.cpuUsPerReq / fixed.cpuUsPerReq;
    cacheLines.push(
      `  cpu/req of a hit against the respond route: ${x.toFixed(2)}x (target at most 1.20)`,
    );
  }
  if (hit !== undefined && nginxHit !== undefined && !hit.unfair) {
    const x = hit.requestsPerSec / nginxHit.requestsPerSec;
    cacheLines.push(`  req/s against nginx proxy_cache: ${x.toFixed(2)}x (target at least 0.70)`);
  }
  const disk = rate("cache-hit-disk");
  const nginxDisk = rows.find((r) => r.scenario === "cache-hit-disk" && r.server === "nginx");
  if (
    disk?.cpuUsPerReq !== undefined && nginxDisk?.cpuUsPerReq !== undefined && !disk.unfair
  ) {
    const x = disk.cpuUsPerReq / nginxDisk.cpuUsPerReq;
    cacheLines.push(
      `  cache-hit-disk: cpu/req against nginx proxy_cache ${x.toFixed(2)}x (target at most 1.30)` +
        `${x > 1.3 ? "  (over the target)" : ""}, req/s ` +
        `${(disk.requestsPerSec / nginxDisk.requestsPerSec).toFixed(2)}x`,
    );
  }
  for (const c of cells.filter((c) => c.result.memberRequests !== undefined)) {
    cacheLines.push(
      `  ${c.scenario}/${c.server}: ${c.result.memberRequests} member requests in ` +
        `${opt.durationS} s (one per expiry is ${opt.durationS}, give or take one)`,
    );
  }
  if (cacheLines.length > 0) console.log("\nscalwsd cache:\n" + cacheLines.join("\n"));
  const tlsLines = tlsSummary(opt.scenarios, rows, cells);
  if (tlsLines.length > 0) console.log("\nTLS, scalwsd against nginx:\n" + tlsLines.join("\n"));
  const rssLine = (m: Map<ServerName, number | undefined>) =>
    opt.servers.filter((s) => m.has(s)).map((s) => `${s} ${mib(m.get(s))}`).join(", ");
  console.log(`\nRSS idle: ${rssLine(rssIdle)} (nginx: its worker)`);
  if (idleLines.length > 0) {
    console.log(
      "10,000 idle keep-alive connections (targets: scalwsd +60 MiB at most; over TLS 16 KiB " +
        "each at most):",
    );
    console.log(idleLines.join("\n"));
  }
  if (rssAfterCache.size > 0) console.log(`RSS at the end of cache-hit: ${rssLine(rssAfterCache)}`);
  if (rssAfter512.size > 0) {
    const over = (m: Map<ServerName, number | undefined>, mibTarget: number) => {
      const kib = m.get("scalwsd");
      return kib !== undefined && kib > mibTarget * 1024 ? "  (scalwsd over the target)" : "";
    };
    console.log(
      `RSS at the end of get-512 (target: scalwsd ${RSS_END_512_MIB} MiB at most): ` +
        `${rssLine(rssAfter512)}${over(rssAfter512, RSS_END_512_MIB)}`,
    );
    console.log(
      `RSS ${SETTLE_MS / 1000} s after get-512 (target: scalwsd under ${RSS_SETTLED_512_MIB} ` +
        `MiB): ${rssLine(rssSettled512)}${over(rssSettled512, RSS_SETTLED_512_MIB)}`,
    );
  }

  // scalwsd (and the floor) write their profiles as they exit, so stop them before reading.
  let profile: { file: string; summary: ProfileSummary } | undefined;
  let floorProfile: { file: string; summary: ProfileSummary } | undefined;
  if (opt.profile) {
    for (const server of opt.servers) {
      const child = children.get(server);
      if (child === undefined) continue;
      await procs.stop(child, 30_000);
      const file = newestProfile(`${OUT_DIR}prof${server === "floor" ? "/floor" : ""}`);
      if (file === undefined) {
        console.error(`bench: ${server} wrote no .cpuprofile`);
        continue;
      }
      const summary = summarize(JSON.parse(await Deno.readTextFile(file)), 25, denoEmitResolver());
      console.log(`\n${server} CPU profile ${file}:\n${formatSummary(summary)}`);
      if (server === "floor") floorProfile = { file, summary };
      else profile = { file, summary };
    }
  }

  const date = new Date().toISOString();
  const record = {
    date,
    machine: {
      cores,
      os: Deno.build.os,
      kernel: Deno.osRelease(),
      pinned: opt.pin,
      loadavgAtStart: load,
    },
    versions: {
      deno: Deno.version.deno,
      nginx: await firstLine(procs, bin.nginx, ["-v"]),
      haproxy: await firstLine(procs, bin.haproxy, ["-v"]),
      wrk: await firstLine(procs, bin.wrk, ["-v"]),
      ...(bin.h2load !== undefined
        ? { h2load: await firstLine(procs, bin.h2load, ["--version"]) }
        : {}),
    },
    settings: {
      durationS: opt.durationS,
      warmupS: opt.warmupS,
      repeat: opt.repeat,
      retries: opt.retries,
      quietWaitS: opt.quietWaitS,
      disturbedAbovePct: DISTURBED_PCT,
      wrkThreads: opt.threads,
      keepalive: opt.keepalive,
      profile: opt.profile,
      nginxCookiePool: `hash $cookie_${COOKIE} consistent`,
      haproxyCookiePool: `cookie ${COOKIE} insert indirect nocache (scalwsd's affinity values)`,
    },
    results: cells.map((c, i) => ({ ...c, ratioToNginx: ratioToNginx(rows, rows[i]) })),
    rssKiB: {
      idle: Object.fromEntries(rssIdle),
      after512: Object.fromEntries(rssAfter512),
      settled512: Object.fromEntries(rssSettled512),
      afterCacheHit: Object.fromEntries(rssAfterCache),
    },
    profile,
    floorProfile,
  };
  await Deno.mkdir(OUT_DIR, { recursive: true });
  const outFile = `${OUT_DIR}bench-${date.replace(/[:.]/g, "-")}.json`;
  await Deno.writeTextFile(outFile, JSON.stringify(record, null, 2) + "\n");
  console.log(`\nresults: ${outFile}`);
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
