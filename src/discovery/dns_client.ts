/**
 * A stub resolver for member discovery: one question to one name server over UDP (a fresh
 * socket and a random id per try, so stray or forged datagrams are ignored), again over TCP
 * when the answer is truncated. Unlike `Deno.resolveDns` it returns the records' TTLs and tells
 * NXDOMAIN from an empty answer, which `refresh: ttl` and `grace` need.
 */
import {
  decodeResponse,
  DnsFormatError,
  type DnsQuestion,
  type DnsResponse,
  encodeQuery,
} from "./dns_message.ts";

/** A name server address. */
export interface NameServer {
  readonly hostname: string;
  readonly port: number;
}

/** A resolution that got no usable answer. */
export class DnsQueryError extends Error {}

/** What `queryDns` asks. */
export interface QueryOptions {
  readonly server: NameServer;
  /** Normalised (`normaliseName`). */
  readonly name: string;
  readonly type: number;
  /** Per try; default 1 s. */
  readonly timeoutMs?: number;
  /** UDP tries; default 3. */
  readonly tries?: number;
}

function randomId(): number {
  return crypto.getRandomValues(new Uint16Array(1))[0];
}

/** Resolves with `value`, or rejects with a `DnsQueryError` after `ms` and runs `onTimeout`. */
function within<T>(p: Promise<T>, ms: number, onTimeout: () => void): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new DnsQueryError(`no answer within ${ms} ms`));
    }, ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

async function overUdp(q: DnsQuestion, o: QueryOptions, ms: number): Promise<DnsResponse> {
  const v6 = o.server.hostname.includes(":");
  const conn = Deno.listenDatagram({
    transport: "udp",
    hostname: v6 ? "::" : "0.0.0.0",
    port: 0,
  });
  try {
    await conn.send(encodeQuery(q), { transport: "udp", ...o.server });
    const wait = (async () => {
      let lastError: DnsFormatError | undefined;
      for (;;) {
        let data: Uint8Array, from: Deno.Addr;
        try {
          [data, from] = await conn.receive();
        } catch (err) {
          throw lastError ?? err;
        }
        const peer = from as Deno.NetAddr;
        if (peer.port !== o.server.port) continue;
        try {
          return decodeResponse(data, q);
        } catch (err) {
          // Not our answer (another id, a forged or broken datagram): keep listening.
          if (!(err instanceof DnsFormatError)) throw err;
          lastError = err;
        }
      }
    })();
    return await within(wait, ms, () => conn.close());
  } finally {
    try {
      conn.close();
    } catch { /* closed by the timeout */ }
  }
}

async function readFull(conn: Deno.Conn, n: number): Promise<Uint8Array> {
  const buf = new Uint8Array(n);
  let off = 0;
  while (off < n) {
    const got = await conn.read(buf.subarray(off));
    if (got === null) throw new DnsQueryError("name server closed the TCP connection");
    off += got;
  }
  return buf;
}

async function overTcp(q: DnsQuestion, o: QueryOptions, ms: number): Promise<DnsResponse> {
  const conn = await within(Deno.connect({ ...o.server }), ms, () => {});
  try {
    const query = encodeQuery(q);
    const framed = new Uint8Array(2 + query.length);
    framed[0] = query.length >> 8;
    framed[1] = query.length & 0xff;
    framed.set(query, 2);
    const exchange = (async () => {
      let off = 0;
      while (off < framed.length) off += await conn.write(framed.subarray(off));
      const len = await readFull(conn, 2);
      return decodeResponse(await readFull(conn, (len[0] << 8) | len[1]), q);
    })();
    return await within(exchange, ms, () => conn.close());
  } finally {
    try {
      conn.close();
    } catch { /* closed by the timeout */ }
  }
}

/**
 * Asks `o.server` for `o.name`/`o.type`. Resolves with the decoded response whatever its
 * rcode; rejects with `DnsQueryError` when no try got an answer, or with the `DnsFormatError`
 * of a malformed one.
 */
export async function queryDns(o: QueryOptions): Promise<DnsResponse> {
  const ms = o.timeoutMs ?? 1_000;
  const tries = o.tries ?? 3;
  let last: unknown;
  for (let i = 0; i < tries; i++) {
    const q: DnsQuestion = { id: randomId(), name: o.name, type: o.type };
    try {
      const r = await overUdp(q, o, ms);
      return r.truncated ? await overTcp({ ...q, id: randomId() }, o, ms) : r;
    } catch (err) {
      if (!(err instanceof DnsQueryError || err instanceof DnsFormatError)) {
        last = new DnsQueryError(`${(err as Error).message ?? err}`);
      } else last = err;
    }
  }
  throw last;
}

/** The first `nameserver` of a resolv.conf text, or 127.0.0.1:53. */
export function nameServerFrom(resolvConf: string): NameServer {
  for (const line of resolvConf.split("\n")) {
    const m = /^\s*nameserver\s+([0-9a-fA-F.:]+)\s*$/.exec(line);
    if (m) return { hostname: m[1], port: 53 };
  }
  return { hostname: "127.0.0.1", port: 53 };
}

/** The system's name server (the first of /etc/resolv.conf). */
export function systemNameServer(): NameServer {
  try {
    return nameServerFrom(Deno.readTextFileSync("/etc/resolv.conf"));
  } catch {
    return { hostname: "127.0.0.1", port: 53 };
  }
}
