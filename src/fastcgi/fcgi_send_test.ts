import assert from "node:assert/strict";
import { ConnPool } from "../http1/conn_pool.ts";
import { Connector } from "../http1/connector.ts";
import type { FinishListener, UpstreamResponse } from "../http1/types.ts";
import { UpstreamError } from "../http1/upstream_error.ts";
import {
  answer,
  concat,
  end,
  FakeFcgiServer,
  readRequest,
  record,
  stderr,
  stdout,
  writeFull,
} from "./_fake_server.ts";
import { ParamsBuffer } from "./params.ts";
import { type FcgiRequest, fcgiSend, type FcgiSendOptions } from "./fcgi_send.ts";
import { FcgiConns } from "./conns.ts";
import { STDOUT } from "./record.ts";

class Finished implements FinishListener {
  calls: [boolean, number][] = [];
  bodyFinished(ok: boolean, n: number): void {
    this.calls.push([ok, n]);
  }
}

class Errors {
  text = "";
  onStderr(buf: Uint8Array, from: number, to: number): void {
    this.text += new TextDecoder().decode(buf.subarray(from, to));
  }
}

function options(responseTimeout = 2000) {
  return {
    connectTimeout: 1000,
    responseTimeout,
    stats: { staleResends: 0 },
    onFinish: new Finished(),
    stderr: new Errors(),
  } satisfies FcgiSendOptions;
}

function request(
  method = "GET",
  body: FcgiRequest["body"] = null,
  bodyLength = 0,
  extra: [string, string][] = [],
): FcgiRequest {
  const params = new ParamsBuffer(16);
  params.add("REQUEST_METHOD", method);
  params.add("SCRIPT_FILENAME", "/srv/index.php");
  params.add("CONTENT_LENGTH", String(bodyLength));
  for (const [n, v] of extra) params.add(n, v);
  return { method, params, body, bodyLength };
}

function poolFor(server: FakeFcgiServer): ConnPool {
  return new ConnPool(
    new Connector({ kind: "unix", path: server.path, canonical: `unix:${server.path}` }, null),
    { maxIdle: 4 },
  );
}

async function text(res: UpstreamResponse): Promise<string> {
  if (res.body === null) return "";
  const b = res.body instanceof Uint8Array ? res.body : await new Response(res.body).bytes();
  return new TextDecoder().decode(b);
}

async function rejects(p: Promise<unknown>, kind: string, phase = "head"): Promise<UpstreamError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof UpstreamError, String(err));
    // A Unix socket closed with unread bytes reads as a reset.
    assert.ok(kind === err.kind || (kind === "closed" && err.kind === "reset"), err.message);
    assert.equal(err.phase, phase, err.message);
    return err;
  }
  assert.fail("expected a rejection");
}

Deno.test("fcgiSend: status, repeated headers and body from one STDOUT record", async () => {
  await using _ = { [Symbol.asyncDispose]: () => server.close() };
  const server = FakeFcgiServer.answering(() =>
    answer(
      "Status: 404 Not Found\r\nContent-Type: text/plain\r\nSet-Cookie: a=1\r\n" +
        "Set-Cookie: b=2\r\nConnection: close\r\n\r\nnot here",
    )
  );
  const pool = poolFor(server);
  const opts = options();
  const res = await fcgiSend(pool, request("GET", null, 0, [["HTTP_X", "y"]]), opts);
  assert.equal(res.status, 404);
  assert.equal(res.statusText, "Not Found");
  assert.deepEqual(res.headers, [
    ["content-type", "text/plain"],
    ["set-cookie", "a=1"],
    ["set-cookie", "b=2"],
  ]);
  assert.equal(await text(res), "not here");
  assert.deepEqual(opts.onFinish.calls, [[true, 8]]);
  const got = server.requests[0];
  assert.equal(got.keepConn, true);
  assert.equal(got.params.get("REQUEST_METHOD"), "GET");
  assert.equal(got.params.get("HTTP_X"), "y");
  pool.close();
});

Deno.test("fcgiSend: a head split over records and reads, Location alone means 302", async () => {
  await using _ = { [Symbol.asyncDispose]: () => server.close() };
  const server = new FakeFcgiServer(async (conn) => {
    await readRequest(conn);
    const parts = [stdout("Locat"), stdout("ion: /login\n"), stdout("X-A: 1\n"), stdout("\nbo")];
    for (const p of parts) {
      await writeFull(conn, p);
      await new Promise((r) => setTimeout(r, 5));
    }
    await writeFull(conn, concat([stdout("dy", 3), stdout(""), end()]));
    await readRequest(conn);
  });
  const pool = poolFor(server);
  const res = await fcgiSend(pool, request(), options());
  assert.equal(res.status, 302);
  assert.deepEqual(res.headers, [["location", "/login"], ["x-a", "1"]]);
  assert.equal(await text(res), "body");
  pool.close();
});

Deno.test("fcgiSend: FCGI_KEEP_CONN reuses one connection; a closed idle one is replaced", async () => {
  await using _ = { [Symbol.asyncDispose]: () => server.close() };
  const server = FakeFcgiServer.answering((_req, n) => answer(`Content-Type: text/plain\n\n${n}`));
  const pool = poolFor(server);
  for (let i = 1; i <= 3; i++) {
    assert.equal(await text(await fcgiSend(pool, request(), options())), String(i));
  }
  assert.equal(server.connections, 1);
  assert.equal(pool.idle, 1);
  server.dropConnections();
  // The pending read on the idle connection sees the close: it leaves the pool.
  for (let i = 0; i < 50 && pool.idle > 0; i++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(pool.idle, 0);
  assert.equal(await text(await fcgiSend(pool, request(), options())), "4");
  assert.equal(server.connections, 2);
  pool.close();
});

Deno.test("fcgiSend: a POST on a kept connection closed before any answer is sent once more", async () => {
  await using _ = { [Symbol.asyncDispose]: () => server.close() };
  // A recycled worker: it answers one request, then closes when the next one arrives.
  const server = new FakeFcgiServer(async (conn, srv) => {
    const req = await readRequest(conn);
    if (req === null) return;
    srv.requests.push(req);
    await writeFull(conn, answer(`Content-Type: text/plain\n\n${srv.requests.length}`));
    await conn.read(new Uint8Array(16));
  });
  const pool = poolFor(server);
  assert.equal(await text(await fcgiSend(pool, request(), options())), "1");
  const opts = options();
  const body = new TextEncoder().encode("name=value");
  const res = await fcgiSend(pool, request("POST", body, body.length), opts);
  assert.equal(await text(res), "2");
  assert.equal(opts.stats.staleResends, 1);
  assert.equal(server.connections, 2);
  assert.deepEqual(server.requests[1].stdin, body);
  pool.close();
});

Deno.test("fcgiSend: a streamed body arrives as STDIN records of its exact length", async () => {
  await using _ = { [Symbol.asyncDispose]: () => server.close() };
  const server = FakeFcgiServer.answering((req) =>
    answer(`Content-Type: text/plain\n\n${req.stdin.length}:${req.params.get("CONTENT_LENGTH")}`)
  );
  const pool = poolFor(server);
  const size = 200_000;
  const data = new Uint8Array(size).map((_, i) => i % 251);
  const body = new Blob([data]).stream();
  const res = await fcgiSend(pool, request("POST", body, size), options());
  assert.equal(await text(res), `${size}:${size}`);
  assert.deepEqual(server.requests[0].stdin, data);
  // Bytes, large and small.
  const big = await fcgiSend(pool, request("PUT", data, size), options());
  assert.equal(await text(big), `${size}:${size}`);
  const small = await fcgiSend(pool, request("POST", data.subarray(0, 10), 10), options());
  assert.equal(await text(small), "10:10");
  pool.close();
});

Deno.test("fcgiSend: a body that ends short of CONTENT_LENGTH is the client's failure", async () => {
  await using _ = { [Symbol.asyncDispose]: () => server.close() };
  const server = FakeFcgiServer.answering(() => answer("Content-Type: text/plain\n\nx"));
  const pool = poolFor(server);
  const body = new Blob([new Uint8Array(10)]).stream();
  await rejects(fcgiSend(pool, request("POST", body, 20), options()), "client", "write");
  pool.close();
});

Deno.test("fcgiSend: a large answer streams and gives the connection back at END_REQUEST", async () => {
  await using _ = { [Symbol.asyncDispose]: () => server.close() };
  const chunk = "x".repeat(8000);
  const server = FakeFcgiServer.answering(() => {
    const parts = [stdout("Content-Type: text/plain\r\n\r\n")];
    for (let i = 0; i < 40; i++) parts.push(stdout(chunk, i % 8));
    parts.push(stderr("PHP Notice: something\n"), stdout(""), end());
    return concat(parts);
  });
  const pool = poolFor(server);
  const opts = options();
  const res = await fcgiSend(pool, request(), opts);
  assert.ok(res.body instanceof ReadableStream);
  assert.equal((await text(res)).length, 320_000);
  assert.deepEqual(opts.onFinish.calls, [[true, 320_000]]);
  assert.equal(opts.stderr.text, "PHP Notice: something\n");
  assert.equal(pool.idle, 1);
  pool.close();
});

Deno.test("fcgiSend: HEAD and 304 answers carry no body", async () => {
  await using _ = { [Symbol.asyncDispose]: () => server.close() };
  const server = FakeFcgiServer.answering((req) =>
    answer(req.params.get("REQUEST_METHOD") === "HEAD" ? "X-A: 1\n\nbody" : "Status: 304\n\n")
  );
  const pool = poolFor(server);
  const head = await fcgiSend(pool, request("HEAD"), options());
  assert.equal(head.body, null);
  const nm = await fcgiSend(pool, request(), options());
  assert.equal(nm.status, 304);
  assert.equal(nm.body, null);
  pool.close();
});

/** Answers each request with `bytes` then closes. */
function misbehaving(bytes: Uint8Array, close = true): FakeFcgiServer {
  return new FakeFcgiServer(async (conn) => {
    await readRequest(conn);
    await writeFull(conn, bytes);
    if (!close) await readRequest(conn);
  });
}

const BAD: [string, Uint8Array, string][] = [
  ["wrong version", concat([record(STDOUT, "A: 1\n\n", { version: 2 }), end()]), "malformed"],
  ["another request id", concat([record(STDOUT, "A: 1\n\n", { id: 2 }), end()]), "malformed"],
  ["an unknown record type", concat([record(11, "x"), end()]), "malformed"],
  ["a header line without colon", answer("A: 1\nnonsense\n\nbody"), "malformed"],
  ["a bad Status", answer("Status: abc\n\n"), "malformed"],
  ["an interim Status", answer("Status: 100 Continue\n\n"), "malformed"],
  ["a folded header", answer("A: 1\n b\n\n"), "malformed"],
  ["an empty head", answer("\r\nbody"), "malformed"],
  ["no output", concat([stdout(""), end()]), "malformed"],
  ["a head never ended", concat([stdout("A: 1\n"), stdout(""), end()]), "malformed"],
  ["OVERLOADED", end(0, 2), "malformed"],
  ["a short END_REQUEST", concat([stdout("A: 1\n\n"), record(3, "abc")]), "malformed"],
  ["a close inside the head", stdout("Content-Ty"), "closed"],
  ["a close inside a record", stdout("A: 1\n\nxyz").subarray(0, 12), "closed"],
  ["a close after the head", stdout("A: 1\n\nbody"), "closed"],
  ["nothing at all", new Uint8Array(0), "closed"],
];

for (const [what, bytes, kind] of BAD) {
  Deno.test(`fcgiSend: ${what} fails the exchange (502), the connection is not kept`, async () => {
    await using _ = { [Symbol.asyncDispose]: () => server.close() };
    const server = misbehaving(bytes);
    const pool = poolFor(server);
    const opts = options();
    await rejects(fcgiSend(pool, request("POST", new Uint8Array(3), 3), opts), kind);
    assert.deepEqual(opts.onFinish.calls, []);
    assert.equal(pool.idle, 0);
    pool.close();
  });
}

Deno.test("fcgiSend: a header block over 64 KiB is refused", async () => {
  await using _ = { [Symbol.asyncDispose]: () => server.close() };
  const lines = [];
  for (let i = 0; i < 20; i++) lines.push(stdout(`X-${i}: ${"v".repeat(4000)}\n`));
  const server = misbehaving(concat([...lines, stdout("\nbody"), stdout(""), end()]));
  const pool = poolFor(server);
  const err = await rejects(fcgiSend(pool, request(), options()), "malformed");
  assert.match(err.message, /64 KiB/);
  pool.close();
});

Deno.test("fcgiSend: a close in the middle of a large body errors the stream", async () => {
  await using _ = { [Symbol.asyncDispose]: () => server.close() };
  const parts = [stdout("A: 1\n\n")];
  for (let i = 0; i < 40; i++) parts.push(stdout("y".repeat(8000)));
  const server = misbehaving(concat(parts));
  const pool = poolFor(server);
  const opts = options();
  const res = await fcgiSend(pool, request(), opts);
  assert.ok(res.body instanceof ReadableStream);
  await assert.rejects(new Response(res.body).bytes());
  assert.deepEqual(opts.onFinish.calls, [[false, 320_000]]);
  pool.close();
});

Deno.test("fcgiSend: no answer within response_timeout is a timeout", async () => {
  await using _ = { [Symbol.asyncDispose]: () => server.close() };
  const server = new FakeFcgiServer(async (conn) => {
    await readRequest(conn);
    await writeFull(conn, stdout("A: 1\n"));
    await new Promise((r) => setTimeout(r, 400));
  });
  const pool = poolFor(server);
  const err = await rejects(fcgiSend(pool, request(), options(100)), "timeout");
  assert.equal(err.timeout, true);
  pool.close();
});

Deno.test("fcgiSend: connect refused", async () => {
  const dir = await Deno.makeTempDir();
  const pool = new ConnPool(
    new Connector({ kind: "unix", path: `${dir}/none.sock`, canonical: "unix:x" }, null),
  );
  await rejects(fcgiSend(pool, request(), options()), "refused", "connect");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("fcgiSend: params over 64 KiB span several PARAMS records", async () => {
  await using _ = { [Symbol.asyncDispose]: () => server.close() };
  const server = FakeFcgiServer.answering((req) =>
    answer(`A: 1\n\n${req.params.get("HTTP_BIG")?.length}`)
  );
  const pool = poolFor(server);
  const res = await fcgiSend(
    pool,
    request("GET", null, 0, [["HTTP_BIG", "b".repeat(150_000)], ["Ü", "ü"]]),
    options(),
  );
  assert.equal(await text(res), "150000");
  assert.equal(server.requests[0].params.get("\xdc"), "\xfc");
  pool.close();
});

Deno.test("fcgiSend on FcgiConns with handoffs: a connection goes from one request to the next waiting one, never kept idle", async () => {
  await using _ = { [Symbol.asyncDispose]: () => server.close() };
  const server = FakeFcgiServer.answering((_req, n) =>
    new Promise((r) => setTimeout(() => r(answer(`X-N: ${n}\n\nanswer ${n}`)), 20))
  );
  const address = `unix:${server.path}`;
  const conns = new FcgiConns(
    new Connector({ kind: "unix", path: server.path, canonical: address }, null),
    { address, maxConns: 1, handoffs: 16 },
  );
  // One connection at a time: the first opens it, the next ones wait and get it in turn.
  const count = 16 + 2;
  const answers = await Promise.all(
    Array.from({ length: count }, () => fcgiSend(conns, request(), options()).then(text)),
  );
  assert.deepEqual(answers, Array.from({ length: count }, (_, i) => `answer ${i + 1}`));
  // 16 requests on the first connection, the rest on a second one.
  assert.equal(server.connections, 2);
  assert.ok(server.requests.every((r) => r.keepConn));
  // Nobody waits any more: the last connection was closed, not kept.
  assert.equal(conns.active, 0);
  assert.equal(conns.busy, 0);
  for (let i = 0; i < 100 && server.open > 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(server.open, 0);
  conns.close();
});

Deno.test("fcgiSend on FcgiConns by default: a connection per request, without FCGI_KEEP_CONN", async () => {
  await using _ = { [Symbol.asyncDispose]: () => server.close() };
  const server = FakeFcgiServer.answering((_req, n) =>
    new Promise((r) => setTimeout(() => r(answer(`X-N: ${n}\n\nanswer ${n}`)), 10))
  );
  const address = `unix:${server.path}`;
  const conns = new FcgiConns(
    new Connector({ kind: "unix", path: server.path, canonical: address }, null),
    { address, maxConns: 1 },
  );
  const answers = await Promise.all(
    Array.from({ length: 3 }, () => fcgiSend(conns, request(), options()).then(text)),
  );
  assert.deepEqual(answers, ["answer 1", "answer 2", "answer 3"]);
  assert.equal(server.connections, 3);
  assert.ok(server.requests.every((r) => !r.keepConn));
  conns.close();
});

/** `n` bytes of a pattern that names `seed`: two bodies never match, a moved byte shows. */
function pattern(n: number, seed: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 7 + seed * 13 + (i >> 8)) & 0xff;
  return b;
}

Deno.test("fcgiSend on FcgiConns: bodies of many records over many reads come out whole, and a later answer does not touch an earlier one", async () => {
  await using _ = { [Symbol.asyncDispose]: () => server.close() };
  // Request n: a body of records of 7,000 bytes, written one by one (separate reads); the
  // first is 40 KB (fits a grown read buffer), the second one record (a view of the read
  // buffer unless copied out), the third 150 KB (the buffer must move).
  const sizes = [40_000, 3_000, 150_000, 9_000];
  const server = new FakeFcgiServer(async (conn, s) => {
    const req = await readRequest(conn);
    if (req === null) return;
    s.requests.push(req);
    const n = s.requests.length;
    const body = pattern(sizes[n - 1], n);
    await writeFull(conn, stdout("Content-Type: application/octet-stream\r\n\r\n"));
    for (let at = 0; at < body.length; at += 7000) {
      await writeFull(conn, stdout(body.subarray(at, Math.min(body.length, at + 7000)), n));
      if (at % 21000 === 0) await new Promise((r) => setTimeout(r, 2));
    }
    await writeFull(conn, concat([stdout(""), end()]));
  });
  const address = `unix:${server.path}`;
  const conns = new FcgiConns(
    new Connector({ kind: "unix", path: server.path, canonical: address }, null),
    { address, maxConns: 1 },
  );
  const got: Uint8Array[] = [];
  for (let i = 0; i < sizes.length; i++) {
    const res = await fcgiSend(conns, request(), options());
    assert.ok(res.body instanceof Uint8Array, "a small body is read whole");
    got.push(res.body);
  }
  for (let i = 0; i < sizes.length; i++) {
    assert.equal(got[i].length, sizes[i]);
    const want = pattern(sizes[i], i + 1);
    assert.equal(got[i].findIndex((b, j) => b !== want[j]), -1, `body ${i + 1} differs at`);
  }
  conns.close();
});
