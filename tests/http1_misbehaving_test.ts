/** End-to-end tests of the HTTP/1.1 client against raw loopback servers that misbehave. */

import assert from "node:assert/strict";
import { disposablePool } from "./_support/conn_pool.ts";
import { sleep, tempDir } from "./_support/mod.ts";
import { ManualClock } from "../src/base/clock.ts";
import {
  Connector,
  ConnPool,
  send,
  UpstreamError,
  type UpstreamResponse,
} from "../src/http1/mod.ts";
import {
  bodyBytes,
  bodyText,
  outbound,
  RawServer,
  readRequest,
  sendOptions,
  writeText,
} from "../src/http1/_test_servers.ts";

function poolFor(server: RawServer, clock?: ManualClock): ConnPool & Disposable {
  const address = {
    kind: "tcp" as const,
    hostname: "127.0.0.1",
    port: server.port,
    canonical: `127.0.0.1:${server.port}`,
  };
  return disposablePool(new ConnPool(new Connector(address, null), { clock }));
}

/** A server that answers every request on a connection with `response`, then waits. */
function answering(response: string, closeAfter = false): RawServer {
  return new RawServer(async (conn) => {
    while (await readRequest(conn) !== null) {
      await writeText(conn, response);
      if (closeAfter) return;
    }
  });
}

/** The error of a whole exchange (send plus reading the body), or null. */
async function failure(p: Promise<UpstreamResponse>): Promise<UpstreamError | null> {
  try {
    await bodyBytes(await p);
    return null;
  } catch (err) {
    if (err instanceof UpstreamError) return err;
    throw err;
  }
}

const malformedCases: [string, string, boolean?][] = [
  ["letters in the status code", "HTTP/1.1 2OO OK\r\nContent-Length: 0\r\n\r\n"],
  ["status below 100", "HTTP/1.1 099 Low\r\nContent-Length: 0\r\n\r\n"],
  ["status of four digits", "HTTP/1.1 1000 High\r\nContent-Length: 0\r\n\r\n"],
  ["not HTTP/1.x", "ICY 200 OK\r\n\r\n"],
  ["HTTP/2 status line", "HTTP/2 200\r\n\r\n"],
  ["header line without colon", "HTTP/1.1 200 OK\r\nBroken header\r\nContent-Length: 0\r\n\r\n"],
  ["invalid header name", "HTTP/1.1 200 OK\r\nX(y): 1\r\nContent-Length: 0\r\n\r\n"],
  ["space before colon", "HTTP/1.1 200 OK\r\nX-A : 1\r\nContent-Length: 0\r\n\r\n"],
  ["obs-fold", "HTTP/1.1 200 OK\r\nX-A: 1\r\n  2\r\nContent-Length: 0\r\n\r\n"],
  ["NUL in a header value", "HTTP/1.1 200 OK\r\nX-A: 1\x002\r\nContent-Length: 0\r\n\r\n"],
  [
    "conflicting Content-Length",
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok",
  ],
  ["invalid Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 2x\r\n\r\nok"],
  [
    "Content-Length with Transfer-Encoding",
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
  ],
  ["Transfer-Encoding gzip", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxx"],
  ["chunked not final", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n"],
  ["bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n"],
  [
    "missing CRLF after chunk",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX0\r\n\r\n",
  ],
  [
    "head over 64 KiB",
    `HTTP/1.1 200 OK\r\nX-Big: ${"b".repeat(70_000)}\r\nContent-Length: 0\r\n\r\n`,
  ],
  ["101 header lines", `HTTP/1.1 200 OK\r\n${"X-A: 1\r\n".repeat(101)}Content-Length: 0\r\n\r\n`],
  ["EOF inside a Content-Length body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", true],
  [
    "EOF inside a large Content-Length body",
    "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\nshort",
    true,
  ],
  [
    "EOF inside a chunked body",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabc",
    true,
  ],
  ["101 without an upgrade request", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n"],
];

Deno.test("http1 misbehaving: malformed responses fail with kind malformed", async () => {
  assert.ok(malformedCases.length >= 12);
  for (const [name, response, closeAfter] of malformedCases) {
    await using server = answering(response, closeAfter);
    using pool = poolFor(server);
    const err = await failure(send(pool, outbound("GET", "/"), sendOptions()));
    assert.ok(err !== null, `${name}: no error`);
    assert.equal(err.kind, "malformed", `${name}: ${err.kind} ${err.message}`);
    assert.equal(pool.active, 0, name);
    assert.equal(pool.idle, 0, name);
  }
});

Deno.test("http1 misbehaving: 100 Continue and 103 are skipped, the final response kept", async () => {
  await using server = answering(
    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n" +
      "HTTP/1.1 201 Created\r\nContent-Length: 4\r\n\r\ndone",
  );
  using pool = poolFor(server);
  const res = await send(pool, outbound("POST", "/", { body: new Uint8Array(3) }), sendOptions());
  assert.equal(res.status, 201);
  assert.equal(await bodyText(res), "done");
  assert.ok(!res.headers.some(([n]) => n === "link"));
  assert.equal(pool.idle, 1);
});

Deno.test("http1 misbehaving: close-delimited body read to EOF, connection not kept", async () => {
  await using server = answering(
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the member closes",
    true,
  );
  using pool = poolFor(server);
  const res = await send(pool, outbound("GET", "/"), sendOptions());
  assert.ok(res.body instanceof ReadableStream);
  assert.equal(await bodyText(res), "until the member closes");
  assert.equal(pool.idle, 0);
  assert.equal(pool.active, 0);
});

Deno.test("http1 misbehaving: chunked response with extensions and trailers", async () => {
  await using server = answering(
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n" +
      "4;a=b\r\nwiki\r\n5\r\npedia\r\n0\r\nX-Sum: 9\r\n\r\n",
  );
  using pool = poolFor(server);
  const res = await send(pool, outbound("GET", "/"), sendOptions());
  assert.equal(await bodyText(res), "wikipedia");
  assert.ok(!res.headers.some(([n]) => n === "trailer" || n === "x-sum"));
  assert.equal(pool.idle, 1);
});

Deno.test("http1 misbehaving: response hop-by-hop and Connection-named headers removed", async () => {
  await using server = answering(
    "HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Internal\r\nKeep-Alive: timeout=5\r\n" +
      "X-Internal: secret\r\nProxy-Connection: x\r\nUpgrade: h2c\r\nX-Public: yes\r\n" +
      "Content-Length: 2\r\n\r\nok",
  );
  using pool = poolFor(server);
  const res = await send(pool, outbound("GET", "/"), sendOptions());
  assert.deepEqual(res.headers, [["x-public", "yes"], ["content-length", "2"]]);
});

Deno.test("http1 misbehaving: HTTP/1.0 and Connection: close responses are not kept", async () => {
  for (
    const [response, keep] of [
      ["HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", false],
      ["HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", true],
      ["HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", false],
    ] as const
  ) {
    await using server = answering(response);
    using pool = poolFor(server);
    assert.equal(await bodyText(await send(pool, outbound("GET", "/"), sendOptions())), "ok");
    assert.equal(pool.idle, keep ? 1 : 0, response);
  }
});

Deno.test("http1 misbehaving: a reset after the request was written fails in phase head", async () => {
  // Closing with the request unread makes the kernel send RST instead of FIN. One byte is read
  // first, so the request has arrived when the server closes (else a slow client's write can
  // come after a FIN, and its read sees EOF).
  await using server = new RawServer(async (conn) => {
    await conn.read(new Uint8Array(1));
  });
  using pool = poolFor(server);
  const err = await failure(send(pool, outbound("GET", "/"), sendOptions()));
  assert.ok(err !== null);
  assert.equal(err.phase, "head");
  assert.equal(err.kind, "reset");
  assert.equal(err.written, true);
  assert.equal(err.timeout, false);
});

Deno.test("http1 misbehaving: no response head within responseTimeout", async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => release = r);
  await using server = new RawServer(async (conn) => {
    await readRequest(conn);
    await held;
  });
  using pool = poolFor(server);
  try {
    const t0 = performance.now();
    const err = await failure(send(pool, outbound("GET", "/"), sendOptions(150)));
    const elapsed = performance.now() - t0;
    assert.ok(err !== null);
    assert.equal(err.phase, "head");
    assert.equal(err.kind, "timeout");
    assert.equal(err.timeout, true);
    assert.equal(err.written, true);
    assert.ok(elapsed >= 145 && elapsed < 1000, `took ${elapsed} ms`);
    assert.equal(pool.active, 0);
  } finally {
    release();
  }
});

Deno.test("http1 misbehaving: a member closing an idle connection is noticed while it is idle", async () => {
  let closed!: () => void;
  const idleClosed = new Promise<void>((r) => closed = r);
  const seen: string[] = [];
  await using server = new RawServer(async (conn, index) => {
    for (;;) {
      const req = await readRequest(conn);
      if (req === null) return;
      seen.push(`${index}:${req.head.slice(0, req.head.indexOf(" "))}`);
      await writeText(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
      if (index === 0) {
        server.drop(conn); // the member's keep-alive timeout fires
        closed();
        return;
      }
    }
  });
  const clock = new ManualClock();
  using pool = poolFor(server, clock);
  assert.equal(await bodyText(await send(pool, outbound("GET", "/"), sendOptions())), "ok");
  await idleClosed;
  await sleep(20); // let the FIN arrive
  assert.equal(pool.idle, 0, "the pending read saw the close and dropped the connection");
  clock.advance(1500);
  const opts = sendOptions();
  const res = await send(pool, outbound("GET", "/again"), opts);
  assert.equal(await bodyText(res), "ok");
  assert.equal(opts.stats.staleResends, 0, "nothing was sent on the dead connection");
  assert.equal(server.accepted, 2);
  assert.deepEqual(seen, ["0:GET", "1:GET"]);
});

Deno.test("http1 misbehaving: after a member closed an idle connection a POST goes on a fresh one", async () => {
  let closed!: () => void;
  const idleClosed = new Promise<void>((r) => closed = r);
  const seen: string[] = [];
  await using server = new RawServer(async (conn, index) => {
    const req = await readRequest(conn);
    if (req === null) return;
    seen.push(`${index}:${req.head.slice(0, req.head.indexOf(" "))}`);
    await writeText(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    server.drop(conn);
    closed();
  });
  const clock = new ManualClock();
  using pool = poolFor(server, clock);
  await bodyText(await send(pool, outbound("GET", "/"), sendOptions()));
  await idleClosed;
  await sleep(20);
  clock.advance(5000);
  assert.equal(pool.idle, 0);
  const opts = sendOptions();
  const res = await send(
    pool,
    outbound("POST", "/order", { body: new TextEncoder().encode("payload") }),
    opts,
  );
  assert.equal(await bodyText(res), "ok");
  assert.equal(opts.stats.staleResends, 0);
  assert.equal(server.accepted, 2);
  assert.deepEqual(seen, ["0:GET", "1:POST"]);
});

Deno.test("http1 misbehaving: connect refused", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = l.addr.port;
  l.close();
  const connector = new Connector({
    kind: "tcp",
    hostname: "127.0.0.1",
    port,
    canonical: `127.0.0.1:${port}`,
  }, null);
  using pool = disposablePool(new ConnPool(connector));
  const err = await failure(send(pool, outbound("GET", "/"), sendOptions()));
  assert.ok(err !== null);
  assert.equal(err.phase, "connect");
  assert.equal(err.kind, "refused");
  assert.equal(err.timeout, false);
  assert.equal(err.written, false);
  assert.match(err.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
});

Deno.test("http1 misbehaving: missing unix socket is refused", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/absent.sock`;
  using pool = disposablePool(
    new ConnPool(new Connector({ kind: "unix", path, canonical: `unix:${path}` }, null)),
  );
  const err = await failure(send(pool, outbound("GET", "/"), sendOptions()));
  assert.equal(err?.phase, "connect");
  assert.equal(err?.kind, "refused");
});

Deno.test("http1 misbehaving: connect timeout against a listener with a full backlog", async (t) => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  const filler: Deno.Conn[] = [];
  let full = false;
  try {
    // Never accepting: once the accept queue is full the kernel drops further SYNs.
    for (let i = 0; i < 5000 && !full; i++) {
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(), 100);
      try {
        filler.push(await Deno.connect({ hostname: "127.0.0.1", port, signal: ac.signal }));
      } catch {
        full = true;
      } finally {
        clearTimeout(timer);
      }
    }
    if (!full) {
      await t.step({ name: "backlog could not be filled here", ignore: true, fn: () => {} });
      return;
    }
    const connector = new Connector({
      kind: "tcp",
      hostname: "127.0.0.1",
      port,
      canonical: `127.0.0.1:${port}`,
    }, null);
    const t0 = performance.now();
    const err = await connector.connect(150).then(() => null, (e) => e as UpstreamError);
    const elapsed = performance.now() - t0;
    assert.ok(err instanceof UpstreamError);
    assert.equal(err.phase, "connect");
    assert.equal(err.kind, "timeout");
    assert.equal(err.timeout, true);
    assert.ok(elapsed >= 145 && elapsed < 1000, `took ${elapsed} ms`);
  } finally {
    for (const c of filler) c.close();
    listener.close();
  }
});
