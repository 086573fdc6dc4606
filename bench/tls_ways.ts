/**
 * `deno run -A bench/tls_ways.ts [--ways direct,relay,...] [--seconds 5] [--idle 2000]`: the
 * ways Deno 2.9.6 can terminate TLS (bench/tls_ways_server.ts), each behind the same 64-byte
 * HTTP answer, measured with h2load: CPU per request of the server process for keep-alive
 * HTTP/1.1 (64 connections), a new connection per request with the TLS session resumed, a full
 * handshake per connection (RSA-2048 and ECDSA P-256), and the resident memory and descriptors
 * of idle TLS connections. What docs/tls.md's table comes from; not part of `deno task bench`.
 */

import { parseArgs } from "node:util";
import * as tls from "node:tls";
import { makeCertificates } from "./tls_load.ts";
import { h2loadArgs } from "./tls_load.ts";
import { parseH2load } from "./h2load_output.ts";
import { clockTicks, cpuTicks, findExecutable, freePorts, rssKiB } from "./procs.ts";
import type { TlsLoad } from "./scenarios.ts";

const SERVER = new URL("./tls_ways_server.ts", import.meta.url).pathname;
const CERTS = new URL("./out/tls-ways/", import.meta.url).pathname;
const H2_WAYS = new Set(["serve-h2", "node-h2"]);

const { values } = parseArgs({
  args: Deno.args,
  options: {
    ways: { type: "string", default: "direct,resolver,node-tls,node-wrap,relay,serve-h2,node-h2" },
    seconds: { type: "string", default: "5" },
    idle: { type: "string", default: "2000" },
    cert: { type: "string", default: "rsa,ecdsa" },
  },
});
const seconds = Number(values.seconds);
const idleCount = Number(values.idle);
const h2load = findExecutable("h2load")!;
await makeCertificates(findExecutable("openssl")!, CERTS);
const hz = await clockTicks();

async function cpuUs(pid: number): Promise<number> {
  const t = await cpuTicks(pid);
  return t === undefined ? NaN : ((t.user + t.system) / hz) * 1e6;
}

async function run(args: string[]): Promise<ReturnType<typeof parseH2load>> {
  // h2load 1.52 can hang at the end of a -D run: bounded.
  const out = await new Deno.Command("timeout", {
    args: ["-s", "KILL", String(seconds * 3 + 30), h2load, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return parseH2load(new TextDecoder().decode(out.stdout));
}

/** CPU us per request of `pid` while `load` runs, and the requests done. */
async function measure(pid: number, load: () => Promise<number>): Promise<[number, number]> {
  const a = await cpuUs(pid);
  const n = await load();
  const b = await cpuUs(pid);
  return [(b - a) / n, n];
}

async function holdIdle(port: number, count: number): Promise<tls.TLSSocket[]> {
  const conns: tls.TLSSocket[] = [];
  const one = () =>
    new Promise<void>((resolve, reject) => {
      // The bench's certificates are self-signed (CA:TRUE), which rustls refuses as a server's.
      const c = tls.connect({
        host: "127.0.0.1",
        port,
        servername: "bench.test",
        rejectUnauthorized: false,
        ALPNProtocols: ["http/1.1"],
      }, () => c.write("GET / HTTP/1.1\r\nHost: bench.test\r\n\r\n"));
      let got = 0;
      c.on("data", (d: Uint8Array) => {
        got += d.length;
        if (got >= 64) {
          conns.push(c);
          resolve();
        }
      });
      c.on("error", reject);
    });
  for (let i = 0; i < count; i += 200) {
    await Promise.all(Array.from({ length: Math.min(200, count - i) }, one));
  }
  return conns;
}

function fdCount(pid: number): number {
  return [...Deno.readDirSync(`/proc/${pid}/fd`)].length;
}

console.log(`uptime: ${new TextDecoder().decode(new Deno.Command("uptime").outputSync().stdout)}`);
const rows: string[] = [];
for (const way of values.ways.split(",")) {
  for (const kind of values.cert.split(",")) {
    const [port] = freePorts(1);
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--unstable-net",
        SERVER,
        way,
        String(port),
        `${CERTS}${kind}.pem`,
        `${CERTS}${kind}.key`,
      ],
      stdout: "null",
      stderr: "inherit",
    }).spawn();
    const h2 = H2_WAYS.has(way);
    const load = (connection: TlsLoad["connection"]): TlsLoad => ({
      cert: kind as "rsa",
      h2,
      connection,
      cpuTarget: 1,
    });
    try {
      await new Promise((r) => setTimeout(r, 1500));
      const base = { port, clients: 64, threads: 2 };
      // Warm-up, then keep-alive.
      await run(h2loadArgs({ ...base, load: load("keep-alive"), seconds: 1 }));
      const [ka] = await measure(
        child.pid,
        async () =>
          (await run(h2loadArgs({ ...base, load: load("keep-alive"), seconds }))).requests,
      );
      let resumed = NaN;
      if (!h2) {
        [resumed] = await measure(
          child.pid,
          async () =>
            (await run(h2loadArgs({ ...base, load: load("resume"), requests: 64 * 40 }))).requests,
        );
      }
      const [full] = await measure(child.pid, async () => {
        let n = 0;
        const end = performance.now() + seconds * 1000;
        while (performance.now() < end) {
          n += (await run(h2loadArgs({ ...base, load: load("full"), requests: 64 }))).requests;
        }
        return n;
      });
      let idle = "-";
      if (!h2 && idleCount > 0) {
        await new Promise((r) => setTimeout(r, 1000));
        const rss0 = (await rssKiB(child.pid))!;
        const fd0 = fdCount(child.pid);
        const conns = await holdIdle(port, idleCount);
        await new Promise((r) => setTimeout(r, 2000));
        const rss1 = (await rssKiB(child.pid))!;
        const fd1 = fdCount(child.pid);
        for (const c of conns) c.destroy();
        idle = `${((rss1 - rss0) / idleCount).toFixed(1)} KiB, ${
          ((fd1 - fd0) / idleCount).toFixed(2)
        } fd`;
      }
      const line = `| ${way} | ${kind} | ${ka.toFixed(1)} | ${resumed.toFixed(0)} | ${
        full.toFixed(0)
      } | ${idle} |`;
      rows.push(line);
      console.log(line);
    } catch (err) {
      console.log(`| ${way} | ${kind} | failed: ${(err as Error).message} |`);
    } finally {
      child.kill("SIGKILL");
      await child.status;
    }
  }
}
console.log("\n| way | cert | keep-alive us/req | resumed us/conn | full us/conn | idle each |");
console.log("|---|---|---|---|---|---|");
console.log(rows.join("\n"));
console.log(`uptime: ${new TextDecoder().decode(new Deno.Command("uptime").outputSync().stdout)}`);
