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

import { AccessLog } from "../src/observe/access_log.ts";
import { Dispatcher } from "../src/server/dispatcher.ts";
import { batchArgs, interleaved, median } from "./_cpu_batches.ts";
import { benchGeneration, serveCases, serveRequest } from "./_in_process.ts";

const ANSWER = new TextEncoder().encode(
  "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok",
);

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

// Every member and the single address talk to memory instead of the network.
const { gen, metrics, registry } = benchGeneration(CONFIG, ANSWER);
const dispatcher = new Dispatcher(gen, metrics, new AccessLog("off"));
const serve = (r: Request) => serveRequest(dispatcher, r);

const ck = await serve(new Request("http://a.test/ck/", { headers: { host: "a.test" } }));
if (ck.status !== 200) throw new Error(`status ${ck.status}: ${await ck.text()}`);
const cookie = ck.headers.get("set-cookie")!.split(";")[0];
const routes: Record<string, () => Request> = {
  address: () => new Request("http://a.test/x", { headers: { host: "a.test" } }),
  "pool-rr": () => new Request("http://a.test/rr/x", { headers: { host: "a.test" } }),
  "pool-cookie": () => new Request("http://a.test/ck/x", { headers: { host: "a.test", cookie } }),
};

const only = Deno.env.get("ONLY");
if (only) { for (const k of Object.keys(routes)) if (k !== only) delete routes[k]; }

const times = await interleaved(serveCases(dispatcher, routes), batchArgs());
for (const [name, t] of Object.entries(times)) {
  console.log(`${name.padEnd(12)} ${median(t).toFixed(2)} us CPU/request (median of ${t.length})`);
}
registry.closeAll();
