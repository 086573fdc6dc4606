/**
 * What `server.tracing` costs scalwsd per request, in process: the whole HTTP/1.1 path of
 * `bench/front_path_bench.ts` (front, dispatcher, single-address proxy, in-memory client and
 * member) with tracing off, on with every request traced (`sample_ratio: 1`), and on with 1 in
 * 100 (`0.01`), batches interleaved; spans are exported to a receiver in a child process, so its
 * own CPU is not counted but the encoding and the `fetch` calls are (an export that ends during
 * a later batch is counted there). Prints each median and the
 * ratio to tracing off; the socket calls that `get-64` also pays are not here, so these ratios are
 * higher than get-64's.
 *
 *     deno run -A bench/tracing_path_bench.ts [batches=30] [requests per batch=2000]
 */

import { Series } from "../src/observe/metrics.ts";
import type { Generation } from "../src/server/generation.ts";
import { Tracer } from "../src/tracing/mod.ts";
import { batchArgs, interleaved, median } from "./_cpu_batches.ts";
import { frontPath } from "./_front_path.ts";
import { freePorts, waitListening, withProcs } from "./procs.ts";

const REQUEST = new TextEncoder().encode(
  "GET / HTTP/1.1\r\nHost: a.test\r\nUser-Agent: wrk\r\n\r\n",
);

const { gen, dispatcher, registry, connection } = frontPath(REQUEST);
// The collector: a child process that reads each export and answers 200, stopped on every exit.
await withProcs("tracing-path", async (procs, dir) => {
  const [port] = freePorts(1);
  await procs.spawn("receiver", Deno.execPath(), [
    "eval",
    `Deno.serve({hostname: "127.0.0.1", port: ${port}, onListen() {}},` +
    ` async (r) => { await r.arrayBuffer(); return new Response("{}"); });`,
  ], `${dir}/receiver.log`);
  await waitListening(port);
  const tracer = (ratio: number) =>
    new Tracer({
      endpoint: `http://127.0.0.1:${port}/v1/traces`,
      sample_ratio: ratio,
      service_name: "bench",
      headers: {},
      trust_client: false,
      queue_size: 2048,
    }, { dropped: new Series("") });
  const gens: Record<string, Generation> = {
    off: gen,
    "ratio 1": { ...gen, tracer: tracer(1) },
    "ratio 0.01": { ...gen, tracer: tracer(0.01) },
  };
  const cases = Object.fromEntries(
    Object.entries(gens).map(([name, g]) => [name, (n: number) => {
      dispatcher.current = g;
      // Exports run as in production (512 spans, or 5 s): a batch's export may end in the next
      // batch.
      return () => connection(n);
    }]),
  );
  const times = await interleaved(cases, batchArgs());
  const off = median(times.off);
  for (const [name, t] of Object.entries(times)) {
    const m = median(t);
    console.log(
      `tracing ${name.padEnd(10)} ${m.toFixed(2)} us CPU/request (median of ${t.length}), ` +
        `${(m / off).toFixed(2)}x off, +${(m - off).toFixed(2)} us`,
    );
  }
  for (const g of Object.values(gens)) await g.tracer?.close();
});
registry.closeAll();
