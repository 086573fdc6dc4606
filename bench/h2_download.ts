/**
 * `deno task bench h2-download`: a 30 MB file over HTTP/2 with 64 KiB client flow-control windows
 * (`nghttp -n -w16 -W16`, as issue 25 measured it), once alone and 10 at a time, from scalwsd
 * (a relayed TLS listener with two certificates, and a one-certificate listener, direct where
 * `net.ipv4.tcp_migrate_req` is 1) and from nginx with the same certificate, round after round
 * (the servers take turns within a round). Reports the median wall time of each and its ratio to
 * nginx's (target: at most 2x); the machine's other load shows as spread between rounds.
 *
 *     deno task bench h2-download [--rounds 5] [--mib 30] [--parallel 10]
 */
import { parseArgs } from "node:util";
import { scalwsYaml } from "../tests/_support/yaml.ts";
import { TLS_HOST } from "./configs.ts";
import { findExecutable, freePorts, waitListening, withProcs } from "./procs.ts";
import { prepareTlsDir, spawnNginx, spawnScalwsd, tlsNginxConf } from "./tls_bench_servers.ts";

type Target = "scalwsd-relay" | "scalwsd-one" | "nginx";
const TARGETS: readonly Target[] = ["scalwsd-relay", "scalwsd-one", "nginx"];

function nginxConf(dir: string, port: number): string {
  return tlsNginxConf(dir, port, ["ecdsa"], `    root ${dir}/www;`);
}

function scalwsdConf(dir: string, relay: number, one: number): string {
  const ecdsa = { cert: `${dir}/ecdsa.pem`, key: `${dir}/ecdsa.key` };
  const rsa = { cert: `${dir}/rsa.pem`, key: `${dir}/rsa.key` };
  return scalwsYaml({
    server: {
      listeners: [
        { name: "relay", address: `127.0.0.1:${relay}`, tls: { certificates: [ecdsa, rsa] } },
        { name: "one", address: `127.0.0.1:${one}`, tls: { certificates: [ecdsa] } },
      ],
      admin: undefined,
    },
    apps: [{ name: "files", domains: [TLS_HOST], runtime: { type: "static", root: `${dir}/www` } }],
  });
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Main: parses `args` (those after `h2-download`). */
export async function main(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      rounds: { type: "string", default: "5" },
      mib: { type: "string", default: "30" },
      parallel: { type: "string", default: "10" },
    },
  });
  const rounds = Number(values.rounds);
  const bytes = Number(values.mib) * 1024 * 1024;
  const parallel = Number(values.parallel);
  const bin = {
    openssl: findExecutable("openssl"),
    nginx: findExecutable("nginx"),
    nghttp: findExecutable("nghttp"),
  };
  for (const [name, path] of Object.entries(bin)) {
    if (path === undefined) throw new Error(`h2-download needs ${name} on the PATH`);
  }
  await withProcs("h2-download", async (procs, dir) => {
    await prepareTlsDir(bin.openssl!, dir);
    await Deno.mkdir(`${dir}/www`);
    const file = new Uint8Array(bytes);
    crypto.getRandomValues(file.subarray(0, 65536));
    await Deno.writeFile(`${dir}/www/big.bin`, file);
    const [relay, one, ng] = freePorts(3);
    const ports: Record<Target, number> = { "scalwsd-relay": relay, "scalwsd-one": one, nginx: ng };
    await spawnScalwsd(procs, dir, scalwsdConf(dir, relay, one));
    await spawnNginx(procs, bin.nginx!, dir, nginxConf(dir, ng));
    for (const t of TARGETS) await waitListening(ports[t]);
    let migrate = "?";
    try {
      migrate = Deno.readTextFileSync("/proc/sys/net/ipv4/tcp_migrate_req").trim();
    } catch {
      // not Linux
    }
    console.log(
      `h2-download: ${values.mib} MiB, nghttp -n -w16 -W16; tcp_migrate_req ${migrate} ` +
        `(1: scalwsd-one is direct, else relayed too)`,
    );
    /** Seconds for `n` downloads at once from `t`. */
    const fetchAll = async (t: Target, n: number): Promise<number> => {
      const started = performance.now();
      const outs = await Promise.all(
        Array.from({ length: n }, () =>
          procs.output("nghttp", bin.nghttp!, [
            "-n",
            "-w16",
            "-W16",
            "-H",
            `:authority: ${TLS_HOST}`,
            `https://127.0.0.1:${ports[t]}/big.bin`,
          ])),
      );
      const took = (performance.now() - started) / 1000;
      for (const o of outs) {
        if (o.code !== 0) throw new Error(`nghttp failed on ${t}: ${o.stderr.trim()}`);
      }
      return took;
    };
    const times = new Map<string, number[]>();
    for (let r = 0; r < rounds; r++) {
      for (const n of [1, parallel]) {
        for (const t of TARGETS) {
          const key = `${t} x${n}`;
          const took = await fetchAll(t, n);
          times.set(key, [...(times.get(key) ?? []), took]);
        }
      }
    }
    console.log("\n| download | server | median s | runs (s) | vs nginx |");
    console.log("| --- | --- | --- | --- | --- |");
    for (const n of [1, parallel]) {
      const base = median(times.get(`nginx x${n}`)!);
      for (const t of TARGETS) {
        const xs = times.get(`${t} x${n}`)!;
        const m = median(xs);
        console.log(
          `| ${n} at once | ${t} | ${m.toFixed(2)} | ${xs.map((x) => x.toFixed(2)).join(" ")} | ` +
            `${(m / base).toFixed(2)}x |`,
        );
      }
    }
  });
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
