/**
 * scalwsd's own CPU per proxied request, in process: the dispatcher and the proxy handlers
 * (single address, 2-member round robin pool, 2-member cookie pool) answer GETs from in-memory
 * members, so no socket, member or load generator is measured. The process's CPU time (not the
 * wall clock) is read per batch, batches are interleaved across the routes, and the median per
 * request is printed. Compare two builds by running them alternately several times; on a busy
 * machine the spread is still about 20 %.
 *
 *     deno run -A bench/proxy_path_bench.ts [batches=30] [requests per batch=2000]
 *     ONLY=pool-rr deno run -A bench/proxy_path_bench.ts     # one route
 */

import process from "node:process";
import { ConnPool } from "../src/http1/conn_pool.ts";
import type { SocketFactory } from "../src/http1/types.ts";
import { AccessLog } from "../src/observe/access_log.ts";
import { Dispatcher } from "../src/server/dispatcher.ts";
import { ServeSession } from "../src/server/serve_session.ts";
import { benchGeneration, MemoryMember } from "./_in_process.ts";

const ANSWER = new TextEncoder().encode(
  "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok",
);

const memory: SocketFactory = { connect: () => Promise.resolve(new MemoryMember(ANSWER)) };

const CONFIG = `
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
upstreams:
  rr: {members: [{address: "127.0.0.1:9001"}, {address: "127.0.0.1:9002"}]}
  ck: {members: [{address: "127.0.0.1:9001"}, {address: "127.0.0.1:9002"}], balance: hash, hash: {by: cookie, name: AFF}}
tenants:
  - name: t
    applications:
      - name: a
        domains: [a.test]
        runtime: {type: proxy, upstream: "http://127.0.0.1:9000"}
        routes:
          - {path: /rr, runtime: {type: proxy, upstream: {pool: rr}}}
          - {path: /ck, runtime: {type: proxy, upstream: {pool: ck}}}
`;

const { gen, metrics, registry } = benchGeneration(CONFIG);
// Every member and the single address talk to memory instead of the network.
for (const pool of registry.pools.values()) {
  for (const m of pool.set.members) (m as { conns: ConnPool }).conns = new ConnPool(memory);
}
for (const h of gen.handlers) {
  if ("conns" in h) (h as { conns: ConnPool }).conns = new ConnPool(memory);
}
const dispatcher = new Dispatcher(gen, metrics, new AccessLog("off"));
const info = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 40000 },
  completed: Promise.resolve(),
} as unknown as Deno.ServeHandlerInfo<Deno.Addr>;
/** One request as Deno.serve hands it over, without a tracked connection. */
const serve = (r: Request) =>
  dispatcher.serve(new ServeSession(r, info, false, null), null) as Response | Promise<Response>;

const ck = await serve(new Request("http://a.test/ck/", { headers: { host: "a.test" } }));
if (ck.status !== 200) throw new Error(`status ${ck.status}: ${await ck.text()}`);
const cookie = ck.headers.get("set-cookie")!.split(";")[0];
const routes: Record<string, () => Request> = {
  address: () => new Request("http://a.test/x", { headers: { host: "a.test" } }),
  "pool-rr": () => new Request("http://a.test/rr/x", { headers: { host: "a.test" } }),
  "pool-cookie": () => new Request("http://a.test/ck/x", { headers: { host: "a.test", cookie } }),
};

async function batch(make: () => Request, n: number): Promise<number> {
  const reqs = Array.from({ length: n }, make);
  const t0 = process.cpuUsage();
  for (const r of reqs) {
    const res = await serve(r);
    if (res.status !== 200) throw new Error(`status ${res.status}`);
  }
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / n;
}

const only = Deno.env.get("ONLY");
if (only) { for (const k of Object.keys(routes)) if (k !== only) delete routes[k]; }

const batches = Number(Deno.args[0] ?? 30);
const perBatch = Number(Deno.args[1] ?? 2000);
const times: Record<string, number[]> = {};
for (const name of Object.keys(routes)) await batch(routes[name], perBatch); // warm-up
for (let b = 0; b < batches; b++) {
  for (const [name, make] of Object.entries(routes)) {
    (times[name] ??= []).push(await batch(make, perBatch));
  }
}
for (const [name, t] of Object.entries(times)) {
  t.sort((a, b) => a - b);
  console.log(
    `${name.padEnd(12)} ${t[t.length >> 1].toFixed(2)} us CPU/request (median of ${t.length})`,
  );
}
registry.closeAll();
