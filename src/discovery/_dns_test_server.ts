/**
 * A name server for tests, on 127.0.0.1 over UDP and TCP (same port), whose answers the test
 * changes while it runs: `dns.set("api.test", "A", {records: [...]})`. Unknown names get
 * NXDOMAIN. An answer can be dropped (a timeout) or marked truncated over UDP (the full answer
 * then comes over TCP).
 */
import { encodeResponse } from "./_dns_encode.ts";
import { DNS_TYPE, type DnsRecord } from "./dns_message.ts";

/** What the server answers for one name and type. */
export interface FakeAnswer {
  readonly rcode?: number;
  readonly records?: readonly DnsRecord[];
  readonly additional?: readonly DnsRecord[];
  /** Never answer (the client times out). */
  readonly drop?: boolean;
  /** Over UDP: answer with TC set and no records, so the client asks again over TCP. */
  readonly truncate?: boolean;
}

export interface FakeDns extends AsyncDisposable {
  readonly port: number;
  /** Queries received, UDP and TCP. */
  readonly queries: { name: string; type: number; tcp: boolean }[];
  set(name: string, type: keyof typeof DNS_TYPE, answer: FakeAnswer): void;
  close(): Promise<void>;
}

function readQuestion(buf: Uint8Array): { id: number; name: string; type: number } | undefined {
  if (buf.length < 17) return undefined;
  const labels: string[] = [];
  let off = 12;
  while (off < buf.length && buf[off] !== 0) {
    const len = buf[off];
    labels.push(new TextDecoder().decode(buf.subarray(off + 1, off + 1 + len)).toLowerCase());
    off += 1 + len;
  }
  if (off + 4 >= buf.length) return undefined;
  return {
    id: (buf[0] << 8) | buf[1],
    name: labels.join("."),
    type: (buf[off + 1] << 8) | buf[off + 2],
  };
}

/** Starts a fake name server on 127.0.0.1 (a free port, UDP and TCP). */
export function startFakeDns(): FakeDns {
  const tcp = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (tcp.addr as Deno.NetAddr).port;
  const udp = Deno.listenDatagram({ transport: "udp", hostname: "127.0.0.1", port });
  const answers = new Map<string, FakeAnswer>();
  const queries: FakeDns["queries"] = [];
  let closed = false;

  const respond = (query: Uint8Array, overTcp: boolean): Uint8Array | undefined => {
    const q = readQuestion(query);
    if (q === undefined) return undefined;
    queries.push({ name: q.name, type: q.type, tcp: overTcp });
    const a = answers.get(`${q.name}/${q.type}`) ?? { rcode: 3 };
    if (a.drop) return undefined;
    if (a.truncate && !overTcp) return encodeResponse({ question: q, truncated: true });
    return encodeResponse({
      question: q,
      rcode: a.rcode ?? 0,
      answers: a.records ?? [],
      additional: a.additional ?? [],
      compress: true,
    });
  };

  const udpLoop = (async () => {
    while (!closed) {
      let data: Uint8Array, from: Deno.Addr;
      try {
        [data, from] = await udp.receive();
      } catch {
        return;
      }
      const out = respond(data, false);
      if (out !== undefined) await udp.send(out, from).catch(() => {});
    }
  })();
  const conns = new Set<Deno.Conn>();
  const tcpLoop = (async () => {
    for await (const conn of tcp) {
      conns.add(conn);
      (async () => {
        try {
          const head = new Uint8Array(2);
          let got = 0;
          while (got < 2) got += (await conn.read(head.subarray(got))) ?? Infinity;
          const len = (head[0] << 8) | head[1];
          const body = new Uint8Array(len);
          got = 0;
          while (got < len) got += (await conn.read(body.subarray(got))) ?? Infinity;
          const out = respond(body, true);
          if (out !== undefined) {
            await conn.write(Uint8Array.of(out.length >> 8, out.length & 0xff, ...out));
          }
        } catch { /* the client went away */ }
        conns.delete(conn);
        try {
          conn.close();
        } catch { /* closed */ }
      })();
    }
  })().catch(() => {});

  const close = async () => {
    if (closed) return;
    closed = true;
    udp.close();
    tcp.close();
    for (const c of conns) {
      try {
        c.close();
      } catch { /* closed */ }
    }
    await udpLoop;
    await tcpLoop;
  };
  return {
    port,
    queries,
    set(name, type, answer) {
      answers.set(`${name}/${DNS_TYPE[type]}`, answer);
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
