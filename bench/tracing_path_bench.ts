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

import process from "node:process";
import { ConnPool } from "../src/http1/conn_pool.ts";
import type { SocketFactory } from "../src/http1/types.ts";
import { AccessLog } from "../src/observe/access_log.ts";
import { Series } from "../src/observe/metrics.ts";
import { Dispatcher } from "../src/server/dispatcher.ts";
import { ClientConn } from "../src/server/client_conn.ts";
import { FrontServe } from "../src/server/front_conn.ts";
import { FrontConnection } from "../src/front/front_connection.ts";
import type { Generation } from "../src/server/generation.ts";
import { Tracer } from "../src/tracing/mod.ts";
import { benchGeneration, MemoryMember } from "./_in_process.ts";

const ANSWER = new TextEncoder().encode(
  "HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Tue, 01 Dec 2026 12:00:00 GMT\r\n" +
    "Content-Type: text/plain\r\nContent-Length: 64\r\nConnection: keep-alive\r\n\r\n" +
    "x".repeat(64),
);
const REQUEST = new TextEncoder().encode(
  "GET / HTTP/1.1\r\nHost: a.test\r\nUser-Agent: wrk\r\n\r\n",
);

/** A keep-alive client in memory: sends the next request once the previous answer arrived. */
class Client {
  answers = 0;
  #sent = 0;
  #wait: ((n: number | null) => void) | null = null;
  #buf: Uint8Array | null = null;
  constructor(private readonly n: number) {}

  read(p: Uint8Array): Promise<number | null> {
    if (this.#sent === this.answers) return Promise.resolve(this.#next(p));
    return new Promise((resolve) => {
      this.#buf = p;
      this.#wait = resolve;
    });
  }
  #next(p: Uint8Array): number | null {
    if (this.#sent === this.n) return null;
    this.#sent++;
    p.set(REQUEST);
    return REQUEST.length;
  }
  write(p: Uint8Array): Promise<number> {
    // One write per answer: a 200 with the member's 64 bytes.
    if (p[9] !== 0x32 || p[10] !== 0x30 || p[11] !== 0x30) {
      throw new Error(`not a 200: ${new TextDecoder().decode(p.subarray(0, 40))}`);
    }
    this.answers++;
    const w = this.#wait;
    if (w !== null) {
      this.#wait = null;
      w(this.#next(this.#buf!));
    }
    return Promise.resolve(p.length);
  }
  close(): void {}
}

const CONFIG = `
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
tenants:
  - name: t
    applications:
      - name: a
        domains: [a.test]
        runtime: {type: proxy, upstream: "http://127.0.0.1:9000"}
`;

// The collector: a child process that reads each export and answers 200.
const receiver = new Deno.Command(Deno.execPath(), {
  args: [
    "eval",
    "const s = Deno.serve({hostname: '127.0.0.1', port: 0, onListen: (a) => console.log(a.port)}," +
    " async (r) => { await r.arrayBuffer(); return new Response('{}'); });",
  ],
  stdout: "piped",
  stderr: "inherit",
}).spawn();
const reader = receiver.stdout.getReader();
const port = Number(new TextDecoder().decode((await reader.read()).value).trim());
reader.releaseLock();

const { gen, metrics, registry } = benchGeneration(CONFIG);
const memory: SocketFactory = { connect: () => Promise.resolve(new MemoryMember(ANSWER)) };
for (const h of gen.handlers) {
  if ("conns" in h) (h as { conns: ConnPool }).conns = new ConnPool(memory);
}
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
const dispatcher = new Dispatcher(gen, metrics, new AccessLog("off"));
const listener = { redirect: null };

/** Serves `n` requests on one connection; the client's answer count. */
async function connection(n: number): Promise<number> {
  const client = new Client(n);
  const c = new ClientConn(client as unknown as Deno.Conn, "127.0.0.1", null, performance.now());
  const front = new FrontConnection(client, new FrontServe(dispatcher, c, listener), c, false);
  await front.finished;
  return client.answers;
}

async function batch(g: Generation, n: number): Promise<number> {
  dispatcher.current = g;
  const t0 = process.cpuUsage();
  const answers = await connection(n);
  // Exports run as in production (512 spans, or 5 s): a batch's export may end in the next batch.
  const t = process.cpuUsage(t0);
  if (answers !== n) throw new Error(`${answers} answers of ${n}`);
  return (t.user + t.system) / n;
}

const batches = Number(Deno.args[0] ?? 30);
const perBatch = Number(Deno.args[1] ?? 2000);
for (const g of Object.values(gens)) await batch(g, perBatch); // warm-up
const times: Record<string, number[]> = {};
for (let b = 0; b < batches; b++) {
  for (const [name, g] of Object.entries(gens)) (times[name] ??= []).push(await batch(g, perBatch));
}
const median = (t: number[]) => [...t].sort((a, b) => a - b)[t.length >> 1];
const off = median(times.off);
for (const [name, t] of Object.entries(times)) {
  const m = median(t);
  console.log(
    `tracing ${name.padEnd(10)} ${m.toFixed(2)} us CPU/request (median of ${t.length}), ` +
      `${(m / off).toFixed(2)}x off, +${(m - off).toFixed(2)} us`,
  );
}
for (const g of Object.values(gens)) await g.tracer?.close();
registry.closeAll();
receiver.kill();
await receiver.status;
