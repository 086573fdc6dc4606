/**
 * One bare way to answer HTTP/2 over TLS on Deno, for `bench/h2_floor.ts`: the floor under
 * scalwsd's HTTP/2 path, with no scalwsd code but what a way names. Not used by scalwsd itself.
 *
 *   deno run -A --unstable-net bench/h2_floor_server.ts WAY PORT CERT.pem KEY.pem [MEMBER_PORT]
 *
 * WAY:
 * - `serve`: `Deno.serve` with `cert`/`key`, a 64-byte `Response` (string body, content-type as
 *   a plain object);
 * - `conn`: a fixed-certificate `Deno.listenTls` whose accepted connections are served one by one
 *   with Deno's internal `serveHttpOnConnection` (what scalwsd's direct listener does), same
 *   handler;
 * - `relay`: a plain TCP port copying every byte through JavaScript into a loopback
 *   `Deno.listenTls` (as scalwsd's relay does, 16.5 KiB then 128 KiB buffers), served as `conn`;
 * - `node-h2`: `node:http2` `createSecureServer` with `allowHTTP1` (libnghttp2 in Deno);
 * - `serve-proxy`, `conn-proxy`: `serve` and `conn` answering with what scalwsd's HTTP/1.1
 *   client (`src/http1/`) gets from the member on MEMBER_PORT.
 */

import * as http2 from "node:http2";
import { Connector, ConnPool, send, type SendOptions } from "../src/http1/mod.ts";
import { serveConnection } from "../src/server/deno_internal.ts";

const [way, portText, certFile, keyFile, memberText] = Deno.args;
const port = Number(portText);
const cert = Deno.readTextFileSync(certFile);
const key = Deno.readTextFileSync(keyFile);
const BODY = "x".repeat(63) + "\n";
const HOST = "127.0.0.1";
const ALPN = ["h2", "http/1.1"];
const TYPE = { "content-type": "text/plain" };

function answer(): Response {
  return new Response(BODY, { headers: TYPE });
}

const SEND: SendOptions = { connectTimeout: 5000, responseTimeout: 30_000 };
const memberPort = Number(memberText ?? "0");
const pool = new ConnPool(
  new Connector(
    { kind: "tcp", hostname: HOST, port: memberPort, canonical: `${HOST}:${memberPort}` },
    null,
  ),
  { maxIdle: 256 },
);

async function proxied(req: Request): Promise<Response> {
  const r = await send(pool, {
    method: req.method,
    target: "/",
    head: {
      headers: req.headers,
      host: "bench.test",
      clientHost: "",
      peer: "",
      peerTrusted: false,
      proto: "https",
      upgrade: false,
    },
    body: null,
    bodyLength: 0,
  }, SEND);
  return new Response(r.body, { status: r.status, headers: r.headers });
}

function onError(): Response {
  return new Response("error\n", { status: 500 });
}

async function serveEach(
  l: Deno.Listener,
  handler: (req: Request) => Response | Promise<Response>,
) {
  for (;;) {
    const conn = await l.accept();
    (conn as Deno.TlsConn).handshake().then(
      () => serveConnection(conn, handler, onError),
      () => conn.close(),
    );
  }
}

async function pump(from: Deno.Conn, to: Deno.Conn): Promise<void> {
  let buf = new Uint8Array(16 * 1024 + 512);
  try {
    for (;;) {
      const n = await from.read(buf);
      if (n === null) break;
      let off = 0;
      while (off < n) off += await to.write(buf.subarray(off, n));
      if (n === buf.length && buf.length < 131072) buf = new Uint8Array(131072);
    }
    await (to as Deno.TcpConn).closeWrite();
  } catch {
    // reset
  }
}

async function relay(handler: (req: Request) => Response | Promise<Response>): Promise<void> {
  const inner = Deno.listenTls({ hostname: HOST, port: 0, cert, key, alpnProtocols: ALPN });
  const innerPort = (inner.addr as Deno.NetAddr).port;
  serveEach(inner, handler);
  const outer = Deno.listen({ hostname: HOST, port });
  for (;;) {
    const conn = await outer.accept();
    conn.setNoDelay(true);
    (async () => {
      const up = await Deno.connect({ hostname: HOST, port: innerPort });
      up.setNoDelay(true);
      await Promise.all([pump(conn, up), pump(up, conn)]);
      conn.close();
      up.close();
    })().catch(() => {});
  }
}

switch (way) {
  case "serve":
  case "serve-proxy":
    Deno.serve(
      { hostname: HOST, port, cert, key, onListen: () => {} },
      way === "serve" ? answer : proxied,
    );
    break;
  case "conn":
  case "conn-proxy":
    serveEach(
      Deno.listenTls({ hostname: HOST, port, cert, key, alpnProtocols: ALPN }),
      way === "conn" ? answer : proxied,
    );
    break;
  case "relay":
    relay(answer);
    break;
  case "node-h2": {
    const server = http2.createSecureServer({ cert, key, allowHTTP1: true });
    server.on("request", (_req, res) => {
      res.writeHead(200, TYPE);
      res.end(BODY);
    });
    server.listen(port, HOST);
    break;
  }
  default:
    console.error(`unknown way ${way}`);
    Deno.exit(2);
}

// A clean exit on SIGTERM, so that `--cpu-prof` writes its profile.
Deno.addSignalListener("SIGTERM", () => Deno.exit(0));
