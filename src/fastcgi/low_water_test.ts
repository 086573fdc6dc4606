import assert from "node:assert/strict";
import { Connector } from "../http1/connector.ts";
import type { Socket } from "../http1/types.ts";
import type { UpstreamResponse } from "../http1/types.ts";
import { concat, end, FakeFcgiServer, readRequest, stdout, writeFull } from "./_fake_server.ts";
import { FcgiConns, LOW_WATER_GRACE } from "./conns.ts";
import { fcgiSend, type FcgiSendOptions } from "./fcgi_send.ts";
import { ParamsBuffer } from "./params.ts";
import { descriptor, lowestFree } from "./low_water.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A TCP connector whose sockets count their reads. */
class CountingConnector extends Connector {
  reads = 0;
  override async connect(timeoutMs: number): Promise<Socket> {
    const s = await super.connect(timeoutMs) as Deno.TcpConn;
    const read = s.read.bind(s);
    s.read = (b: Uint8Array) => {
      this.reads++;
      return read(b);
    };
    return s;
  }
}

function setUp(server: FakeFcgiServer): { conns: FcgiConns; connector: CountingConnector } {
  const address = `127.0.0.1:${server.port}`;
  const connector = new CountingConnector(
    { kind: "tcp", hostname: "127.0.0.1", port: server.port, canonical: address },
    null,
  );
  return { conns: new FcgiConns(connector, { address, maxConns: 2 }), connector };
}

function get() {
  const params = new ParamsBuffer(16);
  params.add("REQUEST_METHOD", "GET");
  params.add("SCRIPT_FILENAME", "/srv/index.php");
  return { method: "GET", params, body: null, bodyLength: 0 };
}

const options: FcgiSendOptions = { connectTimeout: 1000, responseTimeout: 5000 };

async function text(res: UpstreamResponse): Promise<string> {
  const b = res.body instanceof Uint8Array ? res.body : await new Response(res.body).bytes();
  return new TextDecoder().decode(b);
}

Deno.test("FcgiConns over TCP: an answer written in pieces is read once, when the server closes", async () => {
  const server = new FakeFcgiServer(async (conn) => {
    if ((await readRequest(conn)) === null) return;
    await writeFull(conn, stdout("Content-Type: text/plain\r\n\r\nfirst "));
    await sleep(30);
    await writeFull(conn, stdout("second "));
    await sleep(30);
    await writeFull(conn, concat([stdout("third"), stdout(""), end()]));
    // Returning closes the connection, as PHP-FPM does after END_REQUEST.
  }, { tcp: true });
  await using _ = { [Symbol.asyncDispose]: () => server.close() };
  const { conns, connector } = setUp(server);
  for (let i = 0; i < 3; i++) {
    connector.reads = 0;
    const res = await fcgiSend(conns, get(), options);
    assert.equal(await text(res), "first second third");
    // Without the low-water mark: a read per piece (3 or more).
    assert.equal(connector.reads, 1, `request ${i + 1}: reads`);
  }
  conns.close();
});

Deno.test("FcgiConns over TCP: a server that keeps the connection open after END_REQUEST is read after the grace, not at the timeout", async () => {
  const server = new FakeFcgiServer(async (conn) => {
    if ((await readRequest(conn)) === null) return;
    await writeFull(conn, concat([stdout("Status: 200\r\n\r\nkept"), stdout(""), end()]));
    // Until scalwsd closes it.
    await conn.read(new Uint8Array(16)).catch(() => null);
  }, { tcp: true });
  await using _ = { [Symbol.asyncDispose]: () => server.close() };
  const { conns } = setUp(server);
  const t0 = performance.now();
  const res = await fcgiSend(conns, get(), options);
  const took = performance.now() - t0;
  assert.equal(await text(res), "kept");
  assert.ok(took < LOW_WATER_GRACE + 1000, `answered after ${Math.round(took)} ms`);
  conns.close();
});

Deno.test("FcgiConns over TCP: once an answer streams, each later piece is read as it comes", async () => {
  let tailSent = 0;
  const server = new FakeFcgiServer(async (conn) => {
    if ((await readRequest(conn)) === null) return;
    const chunk = new Uint8Array(30_000).fill(0x61);
    await writeFull(conn, stdout("Content-Type: text/plain\r\n\r\n"));
    // 300 KB: more than the bodies read whole, so the answer streams.
    for (let i = 0; i < 10; i++) await writeFull(conn, stdout(chunk));
    await writeFull(conn, stdout("tail"));
    tailSent = performance.now();
    await sleep(800);
    await writeFull(conn, concat([stdout(""), end()]));
  }, { tcp: true });
  await using _ = { [Symbol.asyncDispose]: () => server.close() };
  const { conns } = setUp(server);
  const res = await fcgiSend(conns, get(), options);
  assert.ok(res.body instanceof ReadableStream);
  const reader = res.body.getReader();
  let total = 0;
  let tailAt = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (tailAt === 0 && new TextDecoder().decode(value.subarray(-4)) === "tail") {
      tailAt = performance.now();
    }
  }
  assert.equal(total, 300_004);
  assert.ok(tailAt > 0);
  // Without lowering the mark once streaming: at the server's close, 800 ms later.
  assert.ok(tailAt - tailSent < 400, `tail read ${Math.round(tailAt - tailSent)} ms after sent`);
  conns.close();
});

Deno.test("lowestFree names the descriptor the next socket gets; descriptor() takes that hint", async () => {
  using l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const hint = lowestFree();
  assert.ok(hint >= 0);
  using c = await Deno.connect({ hostname: "127.0.0.1", port: (l.addr as Deno.NetAddr).port });
  assert.equal(descriptor(c, hint), hint);
  // A wrong hint costs nothing but the search: the same descriptor is found.
  assert.equal(descriptor(c, hint + 1000), hint);
});
