/**
 * Real PHP applications under load: Debian's WordPress (front page) and DokuWiki (`wiki:syntax`)
 * behind scalwsd (`type: php`, one process) and nginx (master plus one worker, Debian's
 * `fastcgi_params`, `try_files`, DokuWiki's own rewrites), both in front of the SAME PHP-FPM
 * pool of 4 static workers (system php.ini, opcache on) and the same private MariaDB, in the
 * same run, at 4, 16 and 64 wrk connections. Per run: req/s, p99, failures (non-2xx, socket
 * errors, wrk timeouts), requests left waiting when the load stops (scalwsd's
 * `scalws_fastcgi_queue_length` plus PHP-FPM's `listen queue`), and the CPU per request of the
 * server's process (scalwsd's one process, nginx's worker). Targets (issue 23): req/s at least
 * 0.95x nginx's, p99 at most 1.2x nginx's, nothing left waiting.
 *
 *   deno task bench php-apps [--duration 10s] [--warmup 3s] [--connections 4,16,64]
 *                            [--apps wordpress,dokuwiki] [--repeat 1] [--keep] [--prof DIR]
 *                            [--v8-flags=--perf-basic-prof] [--baseline DIR]
 *
 * `--baseline DIR`: a second scalwsd from another checkout (`DIR/main.ts`, e.g. a worktree of
 * the commit before a change) in front of the same pool, run in the same rounds in rotating
 * order (server `base`): a change is judged against the build before and nginx in one run.
 * Each round's line carries the one-minute load average when it ended.
 *
 * Needs root (WordPress's configuration goes to /etc/wordpress/config-NAME.php, removed at the
 * end), wrk, nginx, php-fpm, mariadb-server, wordpress, dokuwiki.
 */
import { parseArgs } from "node:util";
import { startMariadb } from "../tests/_support/mariadb.ts";
import { startPhpFpm } from "../tests/_support/php_fpm.ts";
import { dokuwikiApp, dokuwikiSite } from "../tests/_support/dokuwiki.ts";
import {
  installWordpress,
  WORDPRESS_ROOT,
  wordpressApp,
  wordpressSite,
} from "../tests/_support/wordpress.ts";
import { DOKUWIKI_ROOT } from "../tests/_support/dokuwiki.ts";
import { scalwsYaml } from "../tests/_support/yaml.ts";
import { request } from "../tests/_support/http.ts";
import {
  childPids,
  clockTicks,
  cpuTicks,
  findExecutable,
  freePorts,
  Procs,
  systemBusyTicks,
  waitReady,
} from "./procs.ts";
import { parseWrk, wrkTimeMs } from "./wrk_output.ts";

const MAIN_TS = new URL("../main.ts", import.meta.url).pathname;
const WP_HOST = "wp.test";
const WIKI_HOST = "wiki.test";
const FPM_WORKERS = 4;

type Server = "scalwsd" | "nginx" | "base";
type App = "wordpress" | "dokuwiki";

const PAGES: Record<App, { host: string; path: string; marker: string }> = {
  wordpress: { host: WP_HOST, path: "/", marker: "scalwsd blog" },
  dokuwiki: { host: WIKI_HOST, path: "/wiki:syntax", marker: "wiki:syntax" },
};

interface Options {
  duration: number;
  warmup: number;
  connections: number[];
  apps: App[];
  repeat: number;
  keep: boolean;
  /** A directory for scalwsd's V8 CPU profile (`--cpu-prof`), written when it stops. */
  prof: string | undefined;
  /** Passed to scalwsd's `deno run` as `--v8-flags=...` (e.g. `--perf-basic-prof` for perf). */
  v8Flags: string | undefined;
  /** A checkout whose `main.ts` runs as a second scalwsd (`base`), or undefined. */
  baseline: string | undefined;
}

function options(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: "string", default: "10s" },
      warmup: { type: "string", default: "3s" },
      connections: { type: "string", default: "4,16,64" },
      apps: { type: "string", default: "wordpress,dokuwiki" },
      repeat: { type: "string", default: "1" },
      keep: { type: "boolean", default: false },
      prof: { type: "string" },
      "v8-flags": { type: "string" },
      baseline: { type: "string" },
    },
  });
  const secs = (v: string) => Math.max(1, Math.round(wrkTimeMs(v) / 1000));
  const apps = values.apps!.split(",").map((a) => a.trim());
  for (const a of apps) {
    if (a !== "wordpress" && a !== "dokuwiki") throw new Error(`unknown app "${a}"`);
  }
  return {
    duration: secs(values.duration!),
    warmup: secs(values.warmup!),
    connections: values.connections!.split(",").map(Number),
    apps: apps as App[],
    repeat: Math.max(1, Number(values.repeat)),
    keep: values.keep!,
    prof: values.prof,
    v8Flags: values["v8-flags"],
    baseline: values.baseline,
  };
}

/** nginx's configuration: the two sites as their packages document them for nginx. */
export function nginxConf(o: {
  dir: string;
  port: number;
  fpm: string;
  wpConfig: string;
  wpContent: string;
}): string {
  const php = `
      try_files $uri =404;
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
      fastcgi_pass ${o.fpm};`;
  return `user root root;
daemon off;
worker_processes 1;
pid ${o.dir}/nginx.pid;
error_log ${o.dir}/nginx.err.log warn;
worker_rlimit_nofile 16384;
events { worker_connections 8192; }
http {
  include /etc/nginx/mime.types;
  access_log off;
  client_body_temp_path ${o.dir}/nginx-tmp/body;
  fastcgi_temp_path ${o.dir}/nginx-tmp/fastcgi;
  proxy_temp_path ${o.dir}/nginx-tmp/proxy;
  uwsgi_temp_path ${o.dir}/nginx-tmp/uwsgi;
  scgi_temp_path ${o.dir}/nginx-tmp/scgi;
  server {
    listen 127.0.0.1:${o.port} backlog=4096;
    server_name ${WP_HOST};
    root ${WORDPRESS_ROOT};
    index index.php;
    location / { try_files $uri $uri/ /index.php?$args; }
    location ~ \\.php$ {${php}
      fastcgi_param WORDPRESS_CONFIG ${o.wpConfig};
    }
    location /wp-content/ {
      root ${o.wpContent};
      location ~ \\.php$ {${php}
        fastcgi_param WORDPRESS_CONFIG ${o.wpConfig};
      }
    }
  }
  server {
    listen 127.0.0.1:${o.port};
    server_name ${WIKI_HOST};
    root ${DOKUWIKI_ROOT};
    index doku.php;
    location ~ /(data|conf|bin|inc|vendor)/ { deny all; }
    location / { try_files $uri $uri/ @dokuwiki; }
    location @dokuwiki {
      rewrite ^/_media/(.*) /lib/exe/fetch.php?media=$1 last;
      rewrite ^/_detail/(.*) /lib/exe/detail.php?media=$1 last;
      rewrite ^/_export/([^/]+)/(.*) /doku.php?do=export_$1&id=$2 last;
      rewrite ^/(.*) /doku.php?id=$1&$args last;
    }
    location ~ \\.php$ {${php}
    }
  }
  server {
    listen 127.0.0.1:${o.port};
    server_name fpm.status;
    location = /fpm-status {
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_NAME /fpm-status;
      fastcgi_param SCRIPT_FILENAME /fpm-status;
      fastcgi_pass ${o.fpm};
    }
  }
}
`;
}

interface Result {
  app: App;
  connections: number;
  server: Server;
  rps: number;
  p99: number;
  failed: number;
  waiting: number;
  cpuUsPerReq: number;
  /** One-minute load average when the round ended. */
  load: number;
  /** PHP-FPM's workers' CPU per request (the same pool whichever server). */
  fpmUsPerReq: number;
  /** The machine's busy share of its cores during the round (1: all busy). */
  busy: number;
}

async function text(url: string, host: string): Promise<{ status: number; body: string }> {
  const res = await request(url, { headers: { host } });
  return { status: res.status, body: res.text };
}

async function main(argv: string[]): Promise<number> {
  const opt = options(argv);
  if (Deno.uid() !== 0) throw new Error("run as root: WordPress's config goes to /etc/wordpress");
  const wrk = findExecutable("wrk");
  const nginx = findExecutable("nginx") ?? findExecutable("/usr/sbin/nginx");
  if (wrk === undefined || nginx === undefined) throw new Error("needs wrk and nginx");
  const hz = await clockTicks();
  const procs = new Procs();
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-bench-php-" });
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const db = await startMariadb();
    cleanups.push(() => db.close());
    const wp = await wordpressSite(db);
    cleanups.push(() => wp.close());
    const wiki = await dokuwikiSite();
    cleanups.push(() => wiki.close());
    // Over TCP: PHP-FPM's status tells its listen queue only for a TCP socket.
    const fpm = await startPhpFpm({
      children: FPM_WORKERS,
      ini: true,
      tcp: true,
      extra: `${wiki.fpmPool}\npm.status_path = /fpm-status\nlisten.backlog = 4096`,
    });
    cleanups.push(() => fpm.close());
    const [ps, pn, pm, pbs, pbm] = freePorts(5);
    const servers: Server[] = opt.baseline === undefined
      ? ["scalwsd", "nginx"]
      : ["scalwsd", "base", "nginx"];
    const ports: Record<Server, number> = { scalwsd: ps, nginx: pn, base: pbs };
    const metricsPorts: Partial<Record<Server, number>> = opt.baseline === undefined
      ? { scalwsd: pm }
      : { scalwsd: pm, base: pbm };
    // status_path: scalwsd learns the pool's 4 workers and opens at most 4 connections.
    const yamlFor = (port: number, metrics: number) =>
      scalwsYaml({
        server: {
          listeners: [{ name: "http", address: `127.0.0.1:${port}` }],
          admin: undefined,
          metrics: { address: `127.0.0.1:${metrics}` },
          // As nginx's `access_log off` beside it.
          access_log: "off",
        },
        apps: [wordpressApp(wp, fpm.address, WP_HOST), dokuwikiApp(fpm.address, WIKI_HOST)].map(
          (a) => ({ ...a, runtime: { ...a.runtime, status_path: "/fpm-status" } }),
        ),
      });
    await Deno.writeTextFile(`${dir}/scalwsd.yaml`, yamlFor(ps, pm));
    await Deno.writeTextFile(`${dir}/base.yaml`, yamlFor(pbs, pbm));
    await Deno.mkdir(`${dir}/nginx-tmp`);
    await Deno.writeTextFile(
      `${dir}/nginx.conf`,
      nginxConf({ dir, port: pn, fpm: fpm.socket, wpConfig: wp.name, wpContent: wp.content }),
    );
    const spawnScalwsd = (name: Server, main: string) =>
      procs.spawn(
        name,
        Deno.execPath(),
        [
          "run",
          "--allow-all",
          "--unstable-net",
          ...(opt.prof === undefined ? [] : [
            "--cpu-prof",
            `--cpu-prof-dir=${name === "scalwsd" ? opt.prof : `${opt.prof}/${name}`}`,
          ]),
          ...(opt.v8Flags === undefined ? [] : [`--v8-flags=${opt.v8Flags}`]),
          main,
          "run",
          "--config",
          `${dir}/${name}.yaml`,
        ],
        `${dir}/${name}.log`,
      );
    const scalwsd = await spawnScalwsd("scalwsd", MAIN_TS);
    const base = opt.baseline === undefined
      ? null
      : await spawnScalwsd("base", `${opt.baseline}/main.ts`);
    const nginxMaster = await procs.spawn(
      "nginx",
      nginx,
      ["-c", `${dir}/nginx.conf`, "-p", dir],
      `${dir}/nginx.log`,
    );
    const alive = (c: Deno.ChildProcess) => async () =>
      (await Promise.race([c.status, Promise.resolve(null)])) === null;
    await waitReady(`http://127.0.0.1:${pm}/livez`, 30_000, alive(scalwsd));
    if (base !== null) await waitReady(`http://127.0.0.1:${pbm}/livez`, 30_000, alive(base));
    await new Promise((r) => setTimeout(r, 300));
    const workers = await childPids(nginxMaster.pid);
    if (workers.length !== 1) throw new Error(`nginx workers: ${workers.join(",")}`);
    const pids: Record<Server, number> = {
      scalwsd: scalwsd.pid,
      nginx: workers[0],
      base: base?.pid ?? -1,
    };

    if (opt.apps.includes("wordpress")) {
      await installWordpress(`http://127.0.0.1:${ps}`, WP_HOST);
    }
    // Both servers answer each page, with the page's content.
    for (const app of opt.apps) {
      const p = PAGES[app];
      for (const server of servers) {
        const r = await text(`http://127.0.0.1:${ports[server]}${p.path}`, p.host);
        if (r.status !== 200 || !r.body.includes(p.marker)) {
          throw new Error(`${app} on ${server}: ${r.status} ${r.body.slice(0, 300)}`);
        }
      }
    }

    const fpmStatus = async (): Promise<{ queue: number; active: number }> => {
      const r = await text(`http://127.0.0.1:${pn}/fpm-status`, "fpm.status");
      const field = (name: string) => {
        const m = new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(r.body);
        return m === null ? NaN : Number(m[1]);
      };
      return { queue: field("listen queue"), active: field("active processes") };
    };
    const fpmQueue = async () => (await fpmStatus()).queue;
    /** Requests waiting in scalwsd's queue (`server`'s, or every scalwsd's). */
    const scalwsdQueue = async (server?: Server): Promise<number> => {
      let sum = 0;
      for (const [name, port] of Object.entries(metricsPorts)) {
        if (server !== undefined && name !== server) continue;
        const r = await text(`http://127.0.0.1:${port}/metrics`, "metrics");
        for (const m of r.body.matchAll(/^scalws_fastcgi_queue_length\{[^}]*\} (\d+)/gm)) {
          sum += Number(m[1]);
        }
      }
      return sum;
    };

    /** CPU ticks of PHP-FPM's workers so far. */
    const fpmTicks = async (): Promise<number> => {
      let sum = 0;
      for (const pid of await childPids(fpm.pid)) {
        const t = await cpuTicks(pid);
        if (t !== undefined) sum += t.user + t.system;
      }
      return sum;
    };

    const run = async (app: App, c: number, server: Server, secs: number) => {
      const p = PAGES[app];
      const before = await cpuTicks(pids[server]);
      const fpm0 = await fpmTicks();
      const busy0 = await systemBusyTicks();
      const t0 = performance.now();
      const out = await procs.output("wrk", wrk, [
        `-t${Math.min(2, c)}`,
        `-c${c}`,
        `-d${secs}s`,
        "--timeout",
        "10s",
        "--latency",
        "-H",
        `Host: ${p.host}`,
        `http://127.0.0.1:${ports[server]}${p.path}`,
      ]);
      const after = await cpuTicks(pids[server]);
      const fpm1 = await fpmTicks();
      const busy1 = await systemBusyTicks();
      const wall = (performance.now() - t0) / 1000;
      // What is still queued once the load stopped and its connections closed (250 ms later).
      await new Promise((r) => setTimeout(r, 250));
      const [fq, sq] = await Promise.all([
        fpmQueue(),
        server === "nginx" ? Promise.resolve(0) : scalwsdQueue(server),
      ]);
      if (out.code !== 0) throw new Error(`wrk: ${out.stderr}`);
      const w = parseWrk(out.stdout);
      const ticks = before === undefined || after === undefined
        ? NaN
        : after.user + after.system - before.user - before.system;
      return {
        app,
        connections: c,
        server,
        rps: w.requestsPerSec,
        p99: w.p99Ms,
        failed: w.non2xx + w.connectErrors + w.readErrors + w.writeErrors + w.timeouts,
        waiting: fq + sq,
        cpuUsPerReq: w.requests > 0 ? (ticks / hz) * 1e6 / w.requests : NaN,
        load: Deno.loadavg()[0],
        fpmUsPerReq: w.requests > 0 ? ((fpm1 - fpm0) / hz) * 1e6 / w.requests : NaN,
        busy: busy0 === undefined || busy1 === undefined
          ? NaN
          : (busy1 - busy0) / hz / wall / navigator.hardwareConcurrency,
      } satisfies Result;
    };

    /**
     * Waits (up to 120 s) until PHP-FPM and scalwsd hold no request of the last run: requests
     * of clients that wrk has closed may still run or wait, and would slow the next run.
     */
    const settle = async () => {
      const end = Date.now() + 120_000;
      while (Date.now() < end) {
        const [f, q] = await Promise.all([fpmStatus(), scalwsdQueue()]);
        // The status request itself is one active process.
        if (f.queue === 0 && f.active <= 1 && q === 0) return;
        await new Promise((r) => setTimeout(r, 250));
      }
      console.log("warning: PHP-FPM still busy 120 s after the run");
    };

    // What each server costs doing nothing (timers, FPM status polls), over 5 s.
    await settle();
    const idle0 = await Promise.all([cpuTicks(pids.scalwsd), cpuTicks(pids.nginx)]);
    await new Promise((r) => setTimeout(r, 5000));
    const idle1 = await Promise.all([cpuTicks(pids.scalwsd), cpuTicks(pids.nginx)]);
    const idleMs = idle0.map((a, i) => {
      const b = idle1[i];
      return a === undefined || b === undefined
        ? NaN
        : (b.user + b.system - a.user - a.system) / hz * 1000 / 5;
    });
    console.log(
      `idle CPU: scalwsd ${idleMs[0].toFixed(1)} ms/s, nginx worker ${idleMs[1].toFixed(1)} ms/s`,
    );

    const results: Result[] = [];
    for (const app of opt.apps) {
      for (const c of opt.connections) {
        for (let i = 0; i < opt.repeat; i++) {
          // Rotating order, so that no server always runs first.
          const order: Server[] = servers.map((_, j) => servers[(i + j) % servers.length]);
          for (const server of order) {
            await settle();
            await run(app, c, server, opt.warmup);
            await settle();
            const r = await run(app, c, server, opt.duration);
            results.push(r);
            console.log(
              `${app}-${c} ${server}: ${r.rps.toFixed(1)} req/s, p99 ${r.p99.toFixed(1)} ms, ` +
                `${r.failed} failed, ${r.waiting} waiting, ${
                  r.cpuUsPerReq.toFixed(0)
                } us CPU/req, ` +
                `PHP ${r.fpmUsPerReq.toFixed(0)} us/req, busy ${(r.busy * 100).toFixed(0)}%, ` +
                `load ${r.load.toFixed(1)}`,
            );
          }
        }
      }
    }
    console.log(table(results));
    const out = new URL("./out/", import.meta.url).pathname;
    await Deno.mkdir(out, { recursive: true });
    const file = `${out}php-apps-${new Date().toISOString().replace(/[:.]/g, "-")}.json`;
    await Deno.writeTextFile(
      file,
      JSON.stringify({ options: opt, idleCpuMsPerS: idleMs, results }, null, 2),
    );
    console.log(`results: ${file}`);
    return 0;
  } finally {
    await procs.stopAll();
    for (const c of cleanups.reverse()) await c().catch(() => {});
    if (!opt.keep) await Deno.remove(dir, { recursive: true }).catch(() => {});
    else console.log(`kept ${dir}`);
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** One line per app and connection count: the medians, and scalwsd over nginx. */
export function table(results: readonly Result[]): string {
  const lines = [
    "| scenario     | scalwsd req/s | nginx req/s | ratio | scalwsd p99 | nginx p99 | p99 ratio | failed s/n | waiting s/n | CPU us/req s/n |",
    "| ------------ | ------------- | ----------- | ----- | ----------- | --------- | --------- | ---------- | ----------- | -------------- |",
  ];
  const keys = [...new Set(results.map((r) => `${r.app}-${r.connections}`))];
  const rows = keys.flatMap((key) =>
    results.some((r) => r.server === "base")
      ? [[key, "scalwsd"], [key, "base"]]
      : [[key, "scalwsd"]]
  );
  for (const [key, mine] of rows) {
    const of = (server: Server) =>
      results.filter((r) => `${r.app}-${r.connections}` === key && r.server === server);
    const s = of(mine as Server);
    const n = of("nginx");
    const m = (rs: Result[], f: (r: Result) => number) => median(rs.map(f));
    const sr = m(s, (r) => r.rps), nr = m(n, (r) => r.rps);
    const sp = m(s, (r) => r.p99), np = m(n, (r) => r.p99);
    const sum = (rs: Result[], f: (r: Result) => number) => rs.reduce((a, r) => a + f(r), 0);
    lines.push(
      `| ${(mine === "base" ? `${key} base` : key).padEnd(12)} | ${sr.toFixed(1).padStart(13)} | ${
        nr.toFixed(1).padStart(11)
      } | ${(sr / nr).toFixed(2)}  | ${sp.toFixed(1).padStart(8)} ms | ${
        np.toFixed(1).padStart(6)
      } ms | ${(sp / np).toFixed(2).padStart(9)} | ${
        `${sum(s, (r) => r.failed)}/${sum(n, (r) => r.failed)}`.padStart(10)
      } | ${`${sum(s, (r) => r.waiting)}/${sum(n, (r) => r.waiting)}`.padStart(11)} | ${
        `${m(s, (r) => r.cpuUsPerReq).toFixed(0)}/${m(n, (r) => r.cpuUsPerReq).toFixed(0)}`
          .padStart(14)
      } |`,
    );
  }
  return lines.join("\n");
}

export { main };

if (import.meta.main) Deno.exit(await main(Deno.args));
