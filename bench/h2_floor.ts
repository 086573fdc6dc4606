/**
 * `deno run -A bench/h2_floor.ts [--rounds 3] [--seconds 5] [--ways a,b,...]`: the floor under
 * scalwsd's HTTP/2 over TLS. Server CPU per request (/proc utime+stime over the requests h2load
 * made) for `h2load -c64 -m1` keep-alive HTTP/2 against a 64-byte answer, from nginx 1.22, the bare
 * Deno ways of `bench/h2_floor_server.ts` (Deno.serve, serveHttpOnConnection on a listenTls, the
 * same behind a JavaScript relay, node:http2) and scalwsd (direct and relayed listeners), each
 * answering itself and proxying to an nginx member on loopback (scalwsd's HTTP/1.1 client for
 * the Deno ways). Ways take turns within a round; the table gives each way's median and its
 * median ratio to nginx of the same round. What docs/tls.md's floor table comes from; not part
 * of `deno task bench`.
 */

import { parseArgs } from "node:util";
import { scalwsYaml } from "../tests/_support/yaml.ts";
import { TLS_BODY, TLS_HOST } from "./configs.ts";
import { parseH2load } from "./h2load_output.ts";
import {
  clockTicks,
  cpuTicks,
  findExecutable,
  freePorts,
  waitListening,
  withProcs,
} from "./procs.ts";
import { makeCertificates } from "./tls_load.ts";

const SERVER = new URL("./h2_floor_server.ts", import.meta.url).pathname;
const MAIN_TS = new URL("../main.ts", import.meta.url).pathname;

interface Way {
  readonly name: string;
  /** Which process answers: a bare way's own, or a shared one. */
  readonly proc: "nginx" | "scalwsd" | string;
  readonly port: number;
  readonly path: string;
}

const BARE = ["serve", "conn", "relay", "node-h2", "serve-proxy", "conn-proxy"];
const ALL = [
  "nginx",
  "nginx-proxy",
  ...BARE,
  "scalwsd-direct",
  "scalwsd-relay",
  "scalwsd-direct-proxy",
  "scalwsd-relay-proxy",
];

function median(xs: readonly number[]): number {
  const s = [...xs].filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function nginxConf(dir: string, name: string, server: string): string {
  return `daemon off;
master_process off;
user root root;
pid ${dir}/${name}.pid;
error_log ${dir}/${name}.err.log warn;
worker_rlimit_nofile 16384;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 300s;
${
    ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
      .map((t) => `  ${t}_temp_path ${dir}/${name}-tmp-${t};\n`).join("")
  }${server}
}
`;
}

const BODY = TLS_BODY.replace("\n", "\\n");

/** Main: parses `args`. */
export async function main(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      rounds: { type: "string", default: "3" },
      seconds: { type: "string", default: "5" },
      ways: { type: "string", default: ALL.join(",") },
    },
  });
  const rounds = Number(values.rounds);
  const seconds = Number(values.seconds);
  const wanted = values.ways.split(",");
  const h2load = findExecutable("h2load")!;
  const nginx = findExecutable("nginx")!;
  const hz = await clockTicks();
  // Every process started is stopped on every way out (an error, SIGINT, the end).
  await withProcs("h2-floor", async (procs, dir) => {
    await makeCertificates(findExecutable("openssl")!, dir);
    const [member, ng, direct, relayed, ...bare] = freePorts(4 + BARE.length);
    const cert = `${dir}/rsa.pem`;
    const keyFile = `${dir}/rsa.key`;
    await Deno.writeTextFile(
      `${dir}/member.conf`,
      nginxConf(
        dir,
        "member",
        `  server { listen 127.0.0.1:${member} backlog=4096;
    location / { default_type text/plain; return 200 "${BODY}"; } }`,
      ),
    );
    await Deno.writeTextFile(
      `${dir}/nginx.conf`,
      nginxConf(
        dir,
        "nginx",
        `  upstream member { server 127.0.0.1:${member}; keepalive 256;
    keepalive_requests 100000000; keepalive_timeout 300s; }
  server {
    listen 127.0.0.1:${ng} ssl http2 backlog=4096;
    server_name ${TLS_HOST};
    ssl_certificate ${cert};
    ssl_certificate_key ${keyFile};
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:tls:10m; ssl_session_tickets on;
    location / { default_type text/plain; return 200 "${BODY}"; }
    location /proxy/ { proxy_pass http://member; proxy_http_version 1.1;
      proxy_set_header Connection ""; }
  }`,
      ),
    );
    const certificates = [{ cert, key: keyFile }];
    await Deno.writeTextFile(
      `${dir}/scalwsd.yaml`,
      scalwsYaml({
        server: {
          listeners: [
            { name: "direct", address: `127.0.0.1:${direct}`, tls: { certificates } },
            // One certificate, relayed: refuse needs the SNI name.
            {
              name: "relayed",
              address: `127.0.0.1:${relayed}`,
              tls: { certificates, unknown_sni: "refuse" },
            },
          ],
          access_log: "off",
          upstream_client: { keepalive: 256 },
          admin: undefined,
        },
        upstreams: {
          member: { members: [{ address: `127.0.0.1:${member}` }], keepalive: 256 },
        },
        apps: [{
          name: "floor",
          domains: [TLS_HOST],
          runtime: { type: "respond", body: TLS_BODY },
          routes: [{ path: "/proxy", runtime: { type: "proxy", upstream: { pool: "member" } } }],
        }],
      }),
    );
    const pids = new Map<string, number>();
    const spawn = async (name: string, cmd: string, a: string[]) => {
      const child = await procs.spawn(name, cmd, a, `${dir}/${name}.log`);
      pids.set(name, child.pid);
    };
    await spawn("member", nginx, ["-c", `${dir}/member.conf`, "-p", dir]);
    await spawn("nginx", nginx, ["-c", `${dir}/nginx.conf`, "-p", dir]);
    await spawn("scalwsd", Deno.execPath(), [
      "run",
      "--allow-all",
      "--unstable-net",
      MAIN_TS,
      "run",
      "--config",
      `${dir}/scalwsd.yaml`,
    ]);
    const ways: Way[] = [
      { name: "nginx", proc: "nginx", port: ng, path: "/" },
      { name: "nginx-proxy", proc: "nginx", port: ng, path: "/proxy/" },
      { name: "scalwsd-direct", proc: "scalwsd", port: direct, path: "/" },
      { name: "scalwsd-relay", proc: "scalwsd", port: relayed, path: "/" },
      { name: "scalwsd-direct-proxy", proc: "scalwsd", port: direct, path: "/proxy/" },
      { name: "scalwsd-relay-proxy", proc: "scalwsd", port: relayed, path: "/proxy/" },
    ];
    for (let i = 0; i < BARE.length; i++) {
      const w = BARE[i];
      if (!wanted.includes(w)) continue;
      await spawn(w, Deno.execPath(), [
        "run",
        "-A",
        "--unstable-net",
        SERVER,
        w,
        String(bare[i]),
        cert,
        keyFile,
        String(member),
      ]);
      ways.push({ name: w, proc: w, port: bare[i], path: "/" });
    }
    const chosen = ALL.filter((n) => wanted.includes(n)).map((n) =>
      ways.find((w) => w.name === n)!
    );
    for (const w of chosen) await waitListening(w.port);
    const uptime = () => new TextDecoder().decode(new Deno.Command("uptime").outputSync().stdout);
    console.log(`h2-floor: h2load -c64 -m1 -t2 -D${seconds}, ${rounds} rounds; ${uptime().trim()}`);

    const h2loadRun = async (w: Way, s: number) => {
      const out = await procs.output("h2load", "timeout", [
        "-s",
        "KILL",
        String(s * 3 + 30),
        h2load,
        "-t2",
        "-c64",
        "-m1",
        `-D${s}`,
        "-N10s",
        `--connect-to=127.0.0.1:${w.port}`,
        `https://${TLS_HOST}:${w.port}${w.path}`,
      ]);
      try {
        return parseH2load(out.stdout);
      } catch {
        // h2load 1.52 can hang at the end of a -D run (killed above): the round's cell is lost.
        return { requests: 0, failed: 1 };
      }
    };
    const cpu = async (pid: number) => {
      const t = await cpuTicks(pid);
      return t === undefined ? NaN : ((t.user + t.system) / hz) * 1e6;
    };
    const us = new Map<string, number[]>();
    const ratios = new Map<string, number[]>();
    for (let r = 0; r < rounds; r++) {
      const round = new Map<string, number>();
      for (const w of chosen) {
        const pid = pids.get(w.proc)!;
        await h2loadRun(w, 1);
        const a = await cpu(pid);
        const res = await h2loadRun(w, seconds);
        const b = await cpu(pid);
        const per = res.requests > 0 && res.failed === 0 ? (b - a) / res.requests : NaN;
        round.set(w.name, per);
        us.set(w.name, [...(us.get(w.name) ?? []), per]);
        console.log(`round ${r + 1} ${w.name}: ${per.toFixed(1)} us/req (${res.requests} req)`);
      }
      for (const w of chosen) {
        const base = w.name.endsWith("-proxy") && round.has("nginx-proxy")
          ? round.get("nginx-proxy")!
          : round.get("nginx")!;
        ratios.set(w.name, [...(ratios.get(w.name) ?? []), round.get(w.name)! / base]);
      }
    }
    console.log(`\n${uptime().trim()}`);
    console.log("\n| way | CPU per request (median) | runs | vs nginx (same round, median) |");
    console.log("| --- | --- | --- | --- |");
    for (const w of chosen) {
      const xs = us.get(w.name)!;
      console.log(
        `| ${w.name} | ${median(xs).toFixed(1)} us | ${xs.map((x) => x.toFixed(1)).join(", ")} | ` +
          `${median(ratios.get(w.name)!).toFixed(2)}x |`,
      );
    }
  });
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
