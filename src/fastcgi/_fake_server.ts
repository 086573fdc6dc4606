/**
 * A raw FastCGI application for tests: reads requests record by record and answers with
 * whatever bytes a test scripts, including broken ones. A Unix socket, or with `tcp` a loopback
 * TCP port.
 */

import { decodeParams } from "./params.ts";
import {
  BEGIN_REQUEST,
  END_REQUEST,
  FCGI_VERSION,
  HEADER_LEN,
  PARAMS,
  STDERR,
  STDIN,
  STDOUT,
} from "./record.ts";

const enc = new TextEncoder();

/** One request as the application received it. */
export interface ReceivedRequest {
  readonly keepConn: boolean;
  readonly params: Map<string, string>;
  readonly stdin: Uint8Array;
}

/** Reads exactly `n` bytes; null at EOF before any. */
async function readExact(conn: Deno.Conn, n: number): Promise<Uint8Array | null> {
  const out = new Uint8Array(n);
  let got = 0;
  while (got < n) {
    const k = await conn.read(out.subarray(got));
    if (k === null) {
      if (got === 0) return null;
      throw new Error("EOF inside a record");
    }
    got += k;
  }
  return out;
}

/** Reads one whole request (BEGIN_REQUEST .. empty STDIN); null when the client closed. */
export async function readRequest(conn: Deno.Conn): Promise<ReceivedRequest | null> {
  let keepConn = false;
  const params: Uint8Array[] = [];
  const stdin: Uint8Array[] = [];
  let paramsDone = false;
  for (;;) {
    const h = await readExact(conn, HEADER_LEN);
    if (h === null) return null;
    const type = h[1];
    const len = (h[4] << 8) | h[5];
    const content = len + h[6] === 0 ? new Uint8Array(0) : (await readExact(conn, len + h[6]))!;
    const data = content.subarray(0, len);
    if (type === BEGIN_REQUEST) keepConn = (data[2] & 1) === 1;
    else if (type === PARAMS) {
      if (len === 0) paramsDone = true;
      else params.push(data);
    } else if (type === STDIN) {
      if (len === 0) {
        if (!paramsDone) throw new Error("STDIN ended before PARAMS");
        return { keepConn, params: new Map(decodeParams(concat(params))), stdin: concat(stdin) };
      }
      stdin.push(data);
    }
  }
}

export function concat(parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** One record of `type` for request 1 (`version` to break on purpose). */
export function record(
  type: number,
  content: Uint8Array | string,
  opts: { padding?: number; version?: number; id?: number } = {},
): Uint8Array {
  const c = typeof content === "string" ? enc.encode(content) : content;
  const pad = opts.padding ?? 0;
  const out = new Uint8Array(HEADER_LEN + c.length + pad);
  const id = opts.id ?? 1;
  out[0] = opts.version ?? FCGI_VERSION;
  out[1] = type;
  out[2] = id >> 8;
  out[3] = id & 0xff;
  out[4] = c.length >> 8;
  out[5] = c.length & 0xff;
  out[6] = pad;
  out.set(c, HEADER_LEN);
  return out;
}

export const stdout = (s: Uint8Array | string, padding = 0) => record(STDOUT, s, { padding });
export const stderr = (s: string) => record(STDERR, s);

/** END_REQUEST with an application status and a protocol status (0: complete). */
export function end(appStatus = 0, protocolStatus = 0): Uint8Array {
  const c = new Uint8Array(8);
  c[0] = appStatus >>> 24;
  c[1] = (appStatus >>> 16) & 0xff;
  c[2] = (appStatus >>> 8) & 0xff;
  c[3] = appStatus & 0xff;
  c[4] = protocolStatus;
  return record(END_REQUEST, c);
}

/** A whole answer: head and body in one STDOUT record, empty STDOUT, END_REQUEST. */
export function answer(text: string): Uint8Array {
  return concat([stdout(text), stdout(""), end()]);
}

/** A FastCGI application on a Unix socket in a fresh temporary directory, or on loopback TCP. */
export class FakeFcgiServer {
  readonly dir: string;
  readonly path: string;
  /** The TCP port (`tcp`), else 0. */
  readonly port: number;
  readonly #listener: Deno.Listener;
  readonly #conns = new Set<Deno.Conn>();
  readonly #tasks = new Set<Promise<void>>();
  #loop: Promise<void>;
  connections = 0;
  requests: ReceivedRequest[] = [];

  /** Connections open now (the client has not closed them yet). */
  get open(): number {
    return this.#conns.size;
  }

  /** `onConn` serves one connection; the default answers each request with `respond`. */
  constructor(
    onConn: (conn: Deno.Conn, server: FakeFcgiServer) => Promise<void>,
    opts: { tcp?: boolean } = {},
  ) {
    this.dir = Deno.makeTempDirSync({ prefix: "scalwsd-fcgi-" });
    this.path = `${this.dir}/app.sock`;
    this.#listener = opts.tcp
      ? Deno.listen({ hostname: "127.0.0.1", port: 0 })
      : Deno.listen({ transport: "unix", path: this.path });
    this.port = opts.tcp ? (this.#listener.addr as Deno.NetAddr).port : 0;
    this.#loop = this.#accept(onConn);
  }

  /** An application that answers every request with `respond(req)` on kept connections. */
  static answering(
    respond: (req: ReceivedRequest, n: number) => Uint8Array | Promise<Uint8Array>,
  ): FakeFcgiServer {
    return new FakeFcgiServer(async (conn, server) => {
      for (;;) {
        const req = await readRequest(conn);
        if (req === null) return;
        server.requests.push(req);
        await writeFull(conn, await respond(req, server.requests.length));
        if (!req.keepConn) return;
      }
    });
  }

  async #accept(onConn: (conn: Deno.Conn, server: FakeFcgiServer) => Promise<void>) {
    try {
      for await (const conn of this.#listener) {
        this.connections++;
        this.#conns.add(conn);
        const t = onConn(conn, this).catch(() => {}).finally(() => {
          this.#conns.delete(conn);
          try {
            conn.close();
          } catch { /* closed */ }
        });
        this.#tasks.add(t);
        t.finally(() => this.#tasks.delete(t));
      }
    } catch { /* listener closed */ }
  }

  /** Closes every accepted connection (the application restarted). */
  dropConnections(): void {
    for (const c of this.#conns) {
      try {
        c.close();
      } catch { /* closed */ }
    }
  }

  async close(): Promise<void> {
    this.#listener.close();
    await this.#loop;
    this.dropConnections();
    await Promise.all([...this.#tasks]);
    await Deno.remove(this.dir, { recursive: true }).catch(() => {});
  }
}

export async function writeFull(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let at = 0;
  while (at < bytes.length) at += await conn.write(bytes.subarray(at));
}
