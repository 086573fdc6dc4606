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
import { AccessLog } from "../src/observe/access_log.ts";
import { Dispatcher } from "../src/server/dispatcher.ts";
import { batchArgs, interleaved, median } from "./_cpu_batches.ts";
import { benchGeneration, serveCases } from "./_in_process.ts";

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
const { gen, metrics, registry } = benchGeneration(yaml);
const dispatcher = new Dispatcher(gen, metrics, new AccessLog("off"));

const make = (host: string) => () =>
  new Request(`http://${host}/x`, { headers: { host, origin: "https://app.test" } });
const routes: Record<string, () => Request> = {
  plain: make("plain.test"),
  policed: make("policed.test"),
  matched: make("matched.test"),
};

const times = await interleaved(serveCases(dispatcher, routes), batchArgs());
for (const [name, t] of Object.entries(times)) {
  console.log(`${name.padEnd(8)} ${median(t).toFixed(2)} us CPU/request (median of ${t.length})`);
}
console.log(
  `policies cost ${(median(times.policed) - median(times.plain)).toFixed(2)} us/request; ` +
    `conditions cost ${(median(times.matched) - median(times.plain)).toFixed(2)} us/request`,
);
registry.closeAll();
