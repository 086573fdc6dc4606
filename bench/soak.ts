/**
 * Soak (not CI): scalwsd as its own process under steady load for a bounded time, with its
 * api pool's members replaced by PUT every second and the configuration reloaded every 30 s.
 * Prints failed requests, and scalwsd's RSS and open file descriptors (/proc/PID/fd) at the
 * start, every 30 s and at the end. Exits 1 when a request, PUT or reload failed, or when, after
 * a `--settle` of at least 66 s (the members' 60 s idle timeout and a pool sweep), scalwsd holds
 * more descriptors than it did idle at the start.
 *
 *   deno run -A bench/soak.ts [--minutes 10] [--connections 32] [--client auto|wrk|deno]
 *                             [--settle 70]
 *
 * `--settle S` waits S seconds after the load before the last sample, so that kept-alive
 * member connections pass their idle timeout (60 s) and close: descriptors still open then
 * are leaks.
 * Load is wrk (keep-alive, 2 threads) when installed, else keep-alive fetch loops in this
 * process. Members are Deno.serve servers in this process, on 127.0.0.1.
 */

import { parseArgs } from "node:util";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
/** Members the churn picks from, plus two for the steady file pool. */
const CHURN_MEMBERS = 6;
const PUT_EVERY_MS = 1000;
const RELOAD_EVERY_MS = 30_000;
const SAMPLE_EVERY_MS = 30_000;

interface Sample {
  label: string;
  seconds: number;
  rssKiB: number;
  fds: number;
}

interface LoadResult {
  requests: number;
  failed: number;
  detail: string;
}

function rssKiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  return m ? Number(m[1]) : -1;
}

function fdCount(pid: number): number {
  let n = 0;
  for (const _ of Deno.readDirSync(`/proc/${pid}/fd`)) n++;
  return n;
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** One request over the admin socket; the status and body text. */
async function admin(
  socket: string,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; text: string }> {
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
  try {
    const res = await fetch(`http://localhost${path}`, { ...init, client });
    return { status: res.status, text: await res.text() };
  } finally {
    client.close();
  }
}

/** The configuration; `generation` changes the api pool's retries and one route per reload. */
function config(dir: string, port: number, steady: string[], seed: string, generation: number) {
  return `
server:
  listeners: [{name: http, address: "127.0.0.1:${port}"}]
  admin: {socket: "${dir}/admin.sock"}
  default_host: soak.test
  access_log: "off"
upstreams:
  dyn:
    members_from: api
    members: [{address: "${seed}"}]
    retries: ${1 + (generation % 2)}
  steady:
    members: [${steady.map((a) => `{address: "${a}"}`).join(", ")}]
tenants:
  - name: soak
    applications:
      - name: a
        domains: [soak.test]
        runtime: {type: proxy, upstream: {pool: dyn}}
        routes:
          - {path: /steady, runtime: {type: proxy, upstream: {pool: steady}}}
          - {path: /gen-${generation}, runtime: {type: respond, body: "${generation}"}}
`;
}

/** wrk's failures: non-2xx/3xx answers and socket errors (both lines appear only when > 0). */
export function wrkFailures(out: string): LoadResult {
  const requests = Number(/(\d+) requests in /.exec(out)?.[1] ?? -1);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const socketErrors = sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? "?";
  return {
    requests,
    failed: non2xx + socketErrors + (requests < 0 ? 1 : 0),
    detail: `${rps} req/s; non-2xx ${non2xx}; socket errors ${sock ? sock[0] : "none"}`,
  };
}

async function wrkLoad(url: string, connections: number, seconds: number): Promise<LoadResult> {
  const out = await new Deno.Command("wrk", {
    args: ["-t2", `-c${connections}`, `-d${seconds}s`, "--timeout", "5s", url],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  const r = wrkFailures(text);
  if (out.code !== 0) r.failed++;
  return r;
}

/** Keep-alive fetch loops until `seconds` pass; every answer but 200 is a failure. */
async function fetchLoad(url: string, connections: number, seconds: number): Promise<LoadResult> {
  const end = Date.now() + seconds * 1000;
  let requests = 0;
  const failures: string[] = [];
  await Promise.all(Array.from({ length: connections }, async () => {
    const client = Deno.createHttpClient({});
    try {
      while (Date.now() < end) {
        try {
          const res = await fetch(url, { client, signal: AbortSignal.timeout(5000) });
          await res.arrayBuffer();
          if (res.status !== 200) failures.push(String(res.status));
        } catch (err) {
          failures.push(String(err));
        }
        requests++;
      }
    } finally {
      client.close();
    }
  }));
  const t = requests / seconds;
  return {
    requests,
    failed: failures.length,
    detail: `${t.toFixed(0)} req/s; failures ${JSON.stringify(failures.slice(0, 5))}`,
  };
}

/**
 * Seconds after the load past which every kept-alive member connection has expired: their 60 s
 * idle timeout, plus the 5 s between two sweeps of a connection pool, plus a margin.
 */
const MEMBER_IDLE_S = 66;

/**
 * Issue 6's judgement of file descriptors: once `settle` outlasted the members' idle timeout,
 * scalwsd holds no more descriptors than it did idle at the start (any more are leaks). Null when
 * the run did not settle that long, or was not sampled at both ends.
 */
export function fdGrowth(
  samples: readonly { fds: number; rssKiB: number }[],
  settle: number,
): { grew: boolean; line: string } | null {
  if (settle < MEMBER_IDLE_S || samples.length < 2) return null;
  const first = samples[0], last = samples[samples.length - 1];
  const grew = last.fds > first.fds;
  const mib = (kib: number) => (kib / 1024).toFixed(1);
  return {
    grew,
    line: `open fds: ${first.fds} idle at the start, ${last.fds} after ${settle} s idle at the ` +
      `end: ${grew ? `grew by ${last.fds - first.fds} (a leak)` : "no growth"}; RSS ` +
      `${mib(first.rssKiB)} -> ${mib(last.rssKiB)} MiB`,
  };
}

async function hasWrk(): Promise<boolean> {
  try {
    await new Deno.Command("wrk", { args: ["--version"], stdout: "null", stderr: "null" })
      .output();
    return true;
  } catch {
    return false;
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      minutes: { type: "string", default: "10" },
      connections: { type: "string", default: "32" },
      client: { type: "string", default: "auto" },
      settle: { type: "string", default: "70" },
    },
    strict: true,
  });
  const minutes = Number(values.minutes);
  const connections = Number(values.connections);
  const settle = Number(values.settle);
  if (
    !(minutes > 0 && minutes <= 24 * 60) || !(connections >= 1 && connections <= 1024) ||
    !(settle >= 0 && settle <= 600)
  ) {
    console.error(
      "soak: --minutes must be in (0, 1440], --connections in [1, 1024], --settle in [0, 600]",
    );
    return 2;
  }
  const useWrk = values.client === "wrk" || (values.client === "auto" && await hasWrk());
  const seconds = Math.round(minutes * 60);

  const dir = await Deno.makeTempDir({ prefix: "scalwsd-soak-" });
  const members = Array.from(
    { length: CHURN_MEMBERS + 2 },
    (_, i) =>
      Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => new Response(`m${i}`)),
  );
  const addrs = members.map((m) => `127.0.0.1:${m.addr.port}`);
  const port = freePort();
  const file = `${dir}/scalws.yaml`;
  const socket = `${dir}/admin.sock`;
  let generation = 0;
  const write = () =>
    Deno.writeTextFile(
      file,
      config(dir, port, addrs.slice(CHURN_MEMBERS), addrs[0], generation),
    );
  await write();

  const log = await Deno.open(`${dir}/scalwsd.log`, { create: true, write: true });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN, "run", "--config", file],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const piped = child.stderr.pipeTo(log.writable).catch(() => {});
  const pid = child.pid;
  const samples: Sample[] = [];
  const t0 = performance.now();
  const sample = (label: string) =>
    samples.push({
      label,
      seconds: Math.round((performance.now() - t0) / 1000),
      rssKiB: rssKiB(pid),
      fds: fdCount(pid),
    });
  let puts = 0, putFailures = 0, reloads = 0, reloadFailures = 0;
  let load: LoadResult = { requests: 0, failed: 1, detail: "not run" };
  try {
    const ready = Date.now() + 15_000;
    for (;;) {
      try {
        if ((await admin(socket, "/readyz")).status === 200) break;
      } catch { /* not listening yet */ }
      if (Date.now() > ready) throw new Error("scalwsd did not become ready");
      await delay(100);
    }
    sample("start, idle");

    // Load on both pools: wrk hits `/` (churned pool); a small fetch loop keeps /steady busy.
    const url = `http://127.0.0.1:${port}/`;
    console.error(
      `soak: ${minutes} min, ${connections} connections, ${useWrk ? "wrk" : "fetch"} client, ` +
        `scalwsd pid ${pid}, logs in ${dir}`,
    );
    const running = useWrk
      ? wrkLoad(url, connections, seconds)
      : fetchLoad(url, connections, seconds);
    const steady = fetchLoad(`http://127.0.0.1:${port}/steady`, 2, seconds);

    const start = Date.now();
    let nextPut = start + PUT_EVERY_MS;
    let nextReload = start + RELOAD_EVERY_MS;
    let nextSample = start + 10_000;
    let k = 0;
    while (Date.now() < start + seconds * 1000 - 500) {
      const now = Date.now();
      if (now >= nextPut) {
        nextPut += PUT_EVERY_MS;
        k++;
        // 1 to 4 of the churn members, always moving: a different subset each second.
        const pick = addrs.slice(0, CHURN_MEMBERS).filter((_, j) =>
          j === k % CHURN_MEMBERS || ((k * 7 + j * 3) % 5 === 0)
        );
        const r = await admin(socket, "/v1/upstreams/dyn", {
          method: "PUT",
          body: JSON.stringify({ members: pick.map((address) => ({ address })) }),
        });
        puts++;
        if (r.status !== 200) {
          putFailures++;
          console.error(`soak: PUT ${r.status} ${r.text}`);
        }
      }
      if (now >= nextReload) {
        nextReload += RELOAD_EVERY_MS;
        generation++;
        await write();
        const r = await admin(socket, "/v1/reload", { method: "POST" });
        reloads++;
        if (r.status !== 200) {
          reloadFailures++;
          console.error(`soak: reload ${r.status} ${r.text}`);
        }
      }
      if (now >= nextSample) {
        nextSample += nextSample === start + 10_000 ? SAMPLE_EVERY_MS - 10_000 : SAMPLE_EVERY_MS;
        sample(samples.length === 1 ? "under load, after 10 s warm-up" : "under load");
      }
      await delay(Math.max(1, Math.min(nextPut, nextReload, nextSample) - Date.now()));
    }
    load = await running;
    const steadyLoad = await steady;
    load = {
      requests: load.requests + steadyLoad.requests,
      failed: load.failed + steadyLoad.failed,
      detail: `${load.detail}; /steady: ${steadyLoad.requests} requests, ${steadyLoad.detail}`,
    };
    sample("end, load stopped");
    if (settle > 0) {
      await delay(settle * 1000);
      sample(`end, ${settle} s idle (member connections expired)`);
    }
  } finally {
    try {
      child.kill("SIGTERM");
    } catch { /* exited */ }
    await child.status;
    await piped;
    for (const m of members) await m.shutdown();
  }

  console.log(`requests: ${load.requests}, failed: ${load.failed} (${load.detail})`);
  console.log(
    `member PUTs: ${puts} (${putFailures} failed), reloads: ${reloads} (${reloadFailures} failed)`,
  );
  console.log("t (s)  RSS (MiB)  open fds  when");
  for (const s of samples) {
    console.log(
      `${String(s.seconds).padStart(5)}  ${(s.rssKiB / 1024).toFixed(1).padStart(9)}  ` +
        `${String(s.fds).padStart(8)}  ${s.label}`,
    );
  }
  const leak = fdGrowth(samples, settle);
  if (leak !== null) console.log(leak.line);
  const failed = load.failed + putFailures + reloadFailures + (leak?.grew ? 1 : 0);
  if (failed === 0) await Deno.remove(dir, { recursive: true });
  else console.log(`logs kept in ${dir}`);
  return failed === 0 ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main());
