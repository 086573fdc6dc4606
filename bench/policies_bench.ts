/**
 * The CPU cost of route policies per request, in process: the dispatcher answers GETs on a
 * `respond` route without policies, one with `headers` + `cors` + `allow`, and one with
 * conditions (methods + headers) through `RouteTable`, with the same request each time
 * (an `Origin` header included). Batches are interleaved and the median is printed; the
 * difference between `plain` and `policed` is what the policies cost (issue 16 asks for at
 * most 2 us). Run it on a quiet machine; under load the spread is 20 % or more.
 *
 *     deno run -A bench/policies_bench.ts [batches=30] [requests per batch=2000]
 */
import process from "node:process";
import { parseConfig } from "../src/config/load.ts";
import { AccessLog } from "../src/observe/access_log.ts";
import { createMetrics } from "../src/observe/families.ts";
import { Registry } from "../src/observe/metrics.ts";
import { systemClock } from "../src/base/clock.ts";
import { buildGeneration } from "../src/server/build.ts";
import { Dispatcher } from "../src/server/dispatcher.ts";
import { ServeSession } from "../src/server/serve_session.ts";

const yaml = `
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
tenants:
  - name: t
    applications:
      - name: plain
        domains: [plain.test]
        runtime: {type: respond, body: ok}
      - name: policed
        domains: [policed.test]
        runtime: {type: respond, body: ok}
        policies:
          - {headers: {request: {set: {X-Env: prod}}, response: {set: {X-Frame-Options: DENY}}}}
          - {cors: {origins: ["https://app.test"], methods: [GET, POST]}}
          - {allow: [127.0.0.0/8, "::1"]}
      - name: matched
        domains: [matched.test]
        runtime: {type: respond, body: ok}
        routes:
          - {path: /, methods: [GET, HEAD], headers: {Origin: "https://app.test"}}
`;
const cfg = parseConfig(yaml, "bench.yaml").config;
const metrics = createMetrics(new Registry());
const gen = buildGeneration(
  cfg,
  1,
  {
    metrics,
    pools: new Map(),
    addresses: new Map(),
    clock: systemClock,
  } as unknown as Parameters<typeof buildGeneration>[2],
);
const dispatcher = new Dispatcher(gen, metrics, new AccessLog("off"));
const info = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 40000 },
  completed: Promise.resolve(),
} as unknown as Deno.ServeHandlerInfo<Deno.Addr>;
/** One request as Deno.serve hands it over, without a tracked connection. */
const serve = (r: Request) =>
  dispatcher.serve(new ServeSession(r, info, false, null), null) as Response | Promise<Response>;

const make = (host: string) => () =>
  new Request(`http://${host}/x`, { headers: { host, origin: "https://app.test" } });
const routes: Record<string, () => Request> = {
  plain: make("plain.test"),
  policed: make("policed.test"),
  matched: make("matched.test"),
};

async function batch(mk: () => Request, n: number): Promise<number> {
  const reqs = Array.from({ length: n }, mk);
  const t0 = process.cpuUsage();
  for (const r of reqs) {
    const res = await serve(r);
    if (res.status !== 200) throw new Error(`status ${res.status}`);
  }
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / n;
}

const batches = Number(Deno.args[0] ?? 30);
const perBatch = Number(Deno.args[1] ?? 2000);
const times: Record<string, number[]> = {};
for (const mk of Object.values(routes)) await batch(mk, perBatch); // warm-up
for (let b = 0; b < batches; b++) {
  for (const [name, mk] of Object.entries(routes)) {
    (times[name] ??= []).push(await batch(mk, perBatch));
  }
}
const median = (t: number[]) => [...t].sort((a, b) => a - b)[t.length >> 1];
for (const [name, t] of Object.entries(times)) {
  console.log(`${name.padEnd(8)} ${median(t).toFixed(2)} us CPU/request (median of ${t.length})`);
}
console.log(
  `policies cost ${(median(times.policed) - median(times.plain)).toFixed(2)} us/request; ` +
    `conditions cost ${(median(times.matched) - median(times.plain)).toFixed(2)} us/request`,
);
