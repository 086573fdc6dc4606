/**
 * The whole HTTP/1.1 path in process, for the benches that measure it (front, tracing): scalwsd's
 * front reads keep-alive GETs for `a.test` from an in-memory client connection, the dispatcher
 * routes them to a single-address proxy whose member is in memory (a 200 with 64 bytes), and
 * the front writes the answers back to the client. No socket is opened.
 */
import { AccessLog } from "../src/observe/access_log.ts";
import { Dispatcher } from "../src/server/dispatcher.ts";
import { ClientConn } from "../src/server/client_conn.ts";
import { FrontServe } from "../src/server/front_conn.ts";
import { FrontConnection } from "../src/front/front_connection.ts";
import { benchGeneration } from "./_in_process.ts";

const ANSWER = new TextEncoder().encode(
  "HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Tue, 01 Dec 2026 12:00:00 GMT\r\n" +
    "Content-Type: text/plain\r\nContent-Length: 64\r\nConnection: keep-alive\r\n\r\n" +
    "x".repeat(64),
);

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

/** A keep-alive client in memory: sends the next request once the previous answer arrived. */
class MemoryClient {
  answers = 0;
  #sent = 0;
  #wait: ((n: number | null) => void) | null = null;
  #buf: Uint8Array | null = null;
  constructor(private readonly request: Uint8Array, private readonly n: number) {}

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
    p.set(this.request);
    return this.request.length;
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

/**
 * The path built once: `connection(n)` serves `n` requests (`request`, the bytes of one) on one
 * client connection and throws unless all `n` were answered 200. Close `registry` at the end.
 */
export function frontPath(request: Uint8Array) {
  const { gen, metrics, registry } = benchGeneration(CONFIG, ANSWER);
  const dispatcher = new Dispatcher(gen, metrics, new AccessLog("off"));
  const listener = { redirect: null };
  const connection = async (n: number): Promise<void> => {
    const client = new MemoryClient(request, n);
    const c = new ClientConn(client as unknown as Deno.Conn, "127.0.0.1", null, performance.now());
    const front = new FrontConnection(client, new FrontServe(dispatcher, c, listener), c, false);
    await front.finished;
    if (client.answers !== n) throw new Error(`${client.answers} answers of ${n}`);
  };
  return { gen, dispatcher, registry, connection };
}
