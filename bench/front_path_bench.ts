/**
 * scalwsd's own CPU per request on the whole HTTP/1.1 path, in process: scalwsd's front reads
 * keep-alive GETs from an in-memory client connection, the dispatcher routes them, the proxy
 * sends them to an in-memory member, and the front writes the answers back; no socket, member
 * or load generator is measured. What this counts is what `get-64` costs scalwsd beyond the
 * socket calls (`floor` pays those too). The process's CPU time (not the wall clock) is read
 * per batch, and the median per request is printed; compare two builds by running them
 * alternately several times.
 *
 *     deno run -A bench/front_path_bench.ts [batches=30] [requests per batch=2000]
 *     MODE=close deno run -A bench/front_path_bench.ts    # a new connection per request
 */

import process from "node:process";
import { ConnPool } from "../src/http1/conn_pool.ts";
import type { SocketFactory } from "../src/http1/types.ts";
import { AccessLog } from "../src/observe/access_log.ts";
import { Dispatcher } from "../src/server/dispatcher.ts";
import { ClientConn } from "../src/server/client_conn.ts";
import { FrontServe } from "../src/server/front_conn.ts";
import { FrontConnection } from "../src/front/front_connection.ts";
import { benchGeneration, MemoryMember } from "./_in_process.ts";

const ANSWER = new TextEncoder().encode(
  "HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Tue, 01 Dec 2026 12:00:00 GMT\r\n" +
    "Content-Type: text/plain\r\nContent-Length: 64\r\nConnection: keep-alive\r\n\r\n" +
    "x".repeat(64),
);
const CLOSE = Deno.env.get("MODE") === "close";
const REQUEST = new TextEncoder().encode(
  `GET / HTTP/1.1\r\nHost: a.test\r\n${CLOSE ? "Connection: close\r\n" : ""}\r\n`,
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

const { gen, metrics, registry } = benchGeneration(CONFIG);
const memory: SocketFactory = { connect: () => Promise.resolve(new MemoryMember(ANSWER)) };
for (const h of gen.handlers) {
  if ("conns" in h) (h as { conns: ConnPool }).conns = new ConnPool(memory);
}
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

async function batch(n: number): Promise<number> {
  const t0 = process.cpuUsage();
  let answers = 0;
  if (CLOSE) { for (let i = 0; i < n; i++) answers += await connection(1); }
  else answers = await connection(n);
  const t = process.cpuUsage(t0);
  if (answers !== n) throw new Error(`${answers} answers of ${n}`);
  return (t.user + t.system) / n;
}

const batches = Number(Deno.args[0] ?? 30);
const perBatch = Number(Deno.args[1] ?? 2000);
await batch(perBatch); // warm-up
const times: number[] = [];
for (let b = 0; b < batches; b++) times.push(await batch(perBatch));
times.sort((a, b) => a - b);
console.log(
  `front ${CLOSE ? "close" : "get  "} ${
    times[times.length >> 1].toFixed(2)
  } us CPU/request (median of ${times.length}, ` +
    `min ${times[0].toFixed(2)})`,
);
registry.closeAll();
