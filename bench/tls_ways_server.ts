/**
 * One way to terminate TLS on Deno, answering 64 bytes over HTTP/1.1 (or HTTP/2 for the `h2`
 * ways) with the least HTTP possible, so that `bench/tls_ways.ts` compares the TLS layers and
 * not HTTP code. Not used by scalwsd itself.
 *
 *   deno run -A --unstable-net bench/tls_ways_server.ts WAY PORT CERT.pem KEY.pem
 *
 * WAY: `direct` (fixed-certificate Deno.listenTls), `resolver` (Deno.listenTls with the
 * `unstableSniResolver` hook), `node-tls` (node:tls createServer with SNICallback),
 * `node-wrap` (node:net, then `new tls.TLSSocket(socket, {isServer: true})`), `relay` (a
 * plain TCP port copying through JavaScript into a loopback Deno.listenTls, as scalwsd's
 * tls_relay.ts does), `serve-h2` (Deno.serve, HTTP/2), `node-h2` (node:http2
 * createSecureServer).
 */

import * as tls from "node:tls";
import * as net from "node:net";
import * as http2 from "node:http2";

const [way, portText, certFile, keyFile] = Deno.args;
const port = Number(portText);
const cert = Deno.readTextFileSync(certFile);
const key = Deno.readTextFileSync(keyFile);
const BODY = "x".repeat(63) + "\n";
const ANSWER = new TextEncoder().encode(
  `HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${BODY.length}\r\n\r\n${BODY}`,
);
const HOST = "127.0.0.1";
const ALPN = ["h2", "http/1.1"];

/** Requests ended in `buf[0..n)` and whether one asked to close (one request at a time). */
function requests(buf: Uint8Array, n: number): [number, boolean] {
  let count = 0;
  for (let i = 3; i < n; i++) {
    if (buf[i] === 10 && buf[i - 1] === 13 && buf[i - 2] === 10 && buf[i - 3] === 13) count++;
  }
  // "Connection: close" as h2load sends it.
  const close = count > 0 && new TextDecoder().decode(buf.subarray(0, n)).includes("close");
  return [count, close];
}

async function serveDeno(conn: Deno.Conn): Promise<void> {
  const buf = new Uint8Array(4096);
  try {
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      const [count, close] = requests(buf, n);
      for (let i = 0; i < count; i++) await conn.write(ANSWER);
      if (close) break;
    }
  } catch {
    // reset
  }
  try {
    conn.close();
  } catch {
    // closed
  }
}

async function acceptDeno(l: Deno.Listener): Promise<void> {
  for (;;) serveDeno(await l.accept());
}

function serveNode(s: tls.TLSSocket): void {
  s.setNoDelay(true);
  s.on("data", (chunk: Uint8Array) => {
    const [count, close] = requests(chunk, chunk.length);
    for (let i = 0; i < count; i++) s.write(ANSWER);
    if (close) s.end();
  });
  s.on("error", () => s.destroy());
}

async function relay(): Promise<void> {
  const inner = Deno.listenTls({ hostname: HOST, port: 0, cert, key, alpnProtocols: ALPN });
  const innerPort = (inner.addr as Deno.NetAddr).port;
  acceptDeno(inner);
  const outer = Deno.listen({ hostname: HOST, port });
  const pump = async (from: Deno.Conn, to: Deno.Conn, size: number) => {
    const buf = new Uint8Array(size);
    try {
      for (;;) {
        const n = await from.read(buf);
        if (n === null) break;
        let off = 0;
        while (off < n) off += await to.write(buf.subarray(off, n));
      }
      await (to as Deno.TcpConn).closeWrite();
    } catch {
      // reset
    }
  };
  for (;;) {
    const conn = await outer.accept();
    (async () => {
      const up = await Deno.connect({ hostname: HOST, port: innerPort });
      up.setNoDelay(true);
      await Promise.all([pump(conn, up, 4096), pump(up, conn, 16 * 1024 + 512)]);
      conn.close();
      up.close();
    })().catch(() => {});
  }
}

switch (way) {
  case "direct":
    acceptDeno(Deno.listenTls({ hostname: HOST, port, cert, key, alpnProtocols: ALPN }));
    break;
  case "resolver": {
    const sym = Symbol.for("unstableSniResolver");
    const opts = { hostname: HOST, port, alpnProtocols: ALPN, [sym]: () => ({ cert, key }) };
    acceptDeno(Deno.listenTls(opts as unknown as Deno.ListenTlsOptions & Deno.TlsCertifiedKeyPem));
    break;
  }
  case "node-tls": {
    const ctx = tls.createSecureContext({ cert, key });
    const server = tls.createServer({
      cert,
      key,
      ALPNProtocols: ["http/1.1"],
      SNICallback: (_name, cb) => cb(null, ctx),
    }, serveNode);
    server.listen(port, HOST);
    break;
  }
  case "node-wrap": {
    const ctx = tls.createSecureContext({ cert, key });
    net.createServer((socket) => {
      const s = new tls.TLSSocket(socket, {
        isServer: true,
        secureContext: ctx,
        ALPNProtocols: ["http/1.1"],
        SNICallback: (_name: string, cb: (e: Error | null, c: tls.SecureContext) => void) =>
          cb(null, ctx),
      });
      serveNode(s);
    }).listen(port, HOST);
    break;
  }
  case "relay":
    relay();
    break;
  case "serve-h2":
    Deno.serve(
      { hostname: HOST, port, cert, key, onListen: () => {} },
      () => new Response(BODY, { headers: { "content-type": "text/plain" } }),
    );
    break;
  case "node-h2": {
    const server = http2.createSecureServer({ cert, key, allowHTTP1: false });
    server.on("stream", (stream) => {
      stream.respond({ ":status": 200, "content-type": "text/plain" });
      stream.end(BODY);
    });
    server.listen(port, HOST);
    break;
  }
  default:
    console.error(`unknown way ${way}`);
    Deno.exit(2);
}
