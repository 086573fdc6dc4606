import assert from "node:assert/strict";
import { ManualClock } from "../base/clock.ts";
import { bytes, FakeFactory, FakeSocket } from "./_fake_socket.ts";
import { ConnPool } from "./conn_pool.ts";
import { send } from "./send.ts";
import type { FinishListener, OutboundRequest, SendOptions, UpstreamResponse } from "./types.ts";
import { UpstreamError } from "./upstream_error.ts";

function request(
  method = "GET",
  body: OutboundRequest["body"] = null,
  bodyLength = -1,
): OutboundRequest {
  return {
    method,
    target: "/x",
    head: {
      headers: new Headers(),
      host: "m",
      clientHost: "c",
      peer: "127.0.0.1",
      peerTrusted: false,
      proto: "http",
      upgrade: false,
    },
    body,
    bodyLength,
  };
}

class Finished implements FinishListener {
  calls: [boolean, number][] = [];
  bodyFinished(ok: boolean, n: number): void {
    this.calls.push([ok, n]);
  }
}

function options(): SendOptions & { stats: { staleResends: number }; onFinish: Finished } {
  return {
    connectTimeout: 1000,
    responseTimeout: 1000,
    stats: { staleResends: 0 },
    onFinish: new Finished(),
  };
}

async function bodyText(res: UpstreamResponse): Promise<string> {
  if (res.body === null) return "";
  const b = res.body instanceof Uint8Array ? res.body : await new Response(res.body).bytes();
  return new TextDecoder().decode(b);
}

async function exchange(
  response: string,
  pieces?: number[],
  req = request(),
): Promise<{ res: UpstreamResponse; pool: ConnPool; sock: FakeSocket; finished: Finished }> {
  const sock = new FakeSocket(bytes(response), pieces);
  const pool = new ConnPool(new FakeFactory([sock]));
  const opts = options();
  const res = await send(pool, req, opts);
  return { res, pool, sock, finished: opts.onFinish };
}

Deno.test("send returns a small Content-Length body as bytes and pools the connection", async () => {
  const { res, pool, finished } = await exchange(
    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
    [
      7,
    ],
  );
  assert.ok(res.body instanceof Uint8Array);
  assert.equal(await bodyText(res), "hello");
  assert.equal(pool.idle, 1);
  assert.deepEqual(finished.calls, [[true, 5]]);
  pool.close();
});

Deno.test("send returns a chunked body complete in the buffer as bytes", async () => {
  const { res, pool } = await exchange(
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
  );
  assert.ok(res.body instanceof Uint8Array);
  assert.equal(await bodyText(res), "abcde");
  assert.equal(pool.idle, 1);
  pool.close();
});

Deno.test("send streams a chunked body that arrives in pieces", async () => {
  const { res, pool, finished } = await exchange(
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
    [50, 3],
  );
  assert.ok(res.body instanceof ReadableStream);
  assert.equal(await bodyText(res), "abcde");
  assert.equal(pool.idle, 1);
  assert.equal(pool.active, 0);
  assert.deepEqual(finished.calls, [[true, 5]]);
  pool.close();
});

Deno.test("send streams a close-delimited body and closes the connection", async () => {
  const { res, pool, sock } = await exchange("HTTP/1.1 200 OK\r\n\r\nuntil the end", [22, 4]);
  assert.ok(res.body instanceof ReadableStream);
  assert.equal(await bodyText(res), "until the end");
  assert.equal(pool.idle, 0);
  assert.equal(sock.closed, true);
  pool.close();
});

Deno.test("send streams Content-Length bodies over 64 KiB", async () => {
  const body = "z".repeat(70_000);
  const { res, pool } = await exchange(`HTTP/1.1 200 OK\r\nContent-Length: 70000\r\n\r\n${body}`);
  assert.ok(res.body instanceof ReadableStream);
  assert.equal(await bodyText(res), body);
  assert.equal(pool.idle, 1);
  pool.close();
});

Deno.test("send waits for the rest of a small body and returns bytes", async () => {
  const body = "y".repeat(40_000);
  const { res, pool } = await exchange(
    `HTTP/1.1 200 OK\r\nContent-Length: 40000\r\n\r\n${body}`,
    [100, 1000],
  );
  assert.ok(res.body instanceof Uint8Array);
  assert.equal(await bodyText(res), body);
  assert.equal(pool.idle, 1);
  pool.close();
});

Deno.test("send gives no body for HEAD, 204 and 304 and keeps the connection", async () => {
  for (
    const [raw, method] of [
      ["HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n", "HEAD"],
      ["HTTP/1.1 204 No Content\r\n\r\n", "GET"],
      ["HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", "GET"],
    ]
  ) {
    const { res, pool } = await exchange(raw, undefined, request(method));
    assert.equal(res.body, null);
    assert.equal(pool.idle, 1, raw);
    pool.close();
  }
});

Deno.test("send skips 100 and 103 interim responses", async () => {
  const { res, pool } = await exchange(
    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" +
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    [30],
  );
  assert.equal(res.status, 200);
  assert.equal(await bodyText(res), "ok");
  pool.close();
});

Deno.test("send does not pool a connection with bytes after the response", async () => {
  const { pool, sock } = await exchange("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA");
  assert.equal(pool.idle, 0);
  assert.equal(sock.closed, true);
  pool.close();
});

Deno.test("send reports a consumer cancel as an unfinished body", async () => {
  const { res, pool, sock, finished } = await exchange(
    "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + "a".repeat(100),
  );
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  await reader.read();
  await reader.cancel();
  assert.deepEqual(finished.calls, [[false, 100]]);
  assert.equal(sock.closed, true);
  assert.equal(pool.active, 0);
  pool.close();
});

Deno.test("send fails a body cut short with kind malformed, phase body", async () => {
  const { res, pool, finished } = await exchange(
    "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + "a".repeat(100),
  );
  await assert.rejects(bodyText(res), (err: unknown) => {
    assert.ok(err instanceof UpstreamError);
    assert.equal(err.kind, "malformed");
    assert.equal(err.phase, "body");
    return true;
  });
  assert.deepEqual(finished.calls, [[false, 100]]);
  pool.close();
});

/** A pool holding one idle connection that reads EOF at once, idle for `idleMs`. */
async function stalePool(idleMs: number, next: FakeSocket[]) {
  const clock = new ManualClock();
  const stale = new FakeSocket(new Uint8Array(0));
  const factory = new FakeFactory([stale, ...next]);
  const pool = new ConnPool(factory, { clock });
  pool.release(await pool.open(100), true);
  clock.advance(idleMs);
  return { pool, stale, factory };
}

const OK = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

Deno.test("send resends a written GET once after 1 s idle and counts it", async () => {
  const fresh = new FakeSocket(bytes(OK));
  const { pool, stale, factory } = await stalePool(1000, [fresh]);
  const opts = options();
  const res = await send(pool, request("GET"), opts);
  assert.equal(await bodyText(res), "ok");
  assert.equal(opts.stats.staleResends, 1);
  assert.equal(factory.connects, 2);
  assert.ok(stale.written > 0);
  assert.equal(stale.closed, true);
  pool.close();
});

Deno.test("send does not resend a written GET idle under 1 s", async () => {
  const { pool, factory } = await stalePool(999, [new FakeSocket(bytes(OK))]);
  const opts = options();
  await assert.rejects(send(pool, request("GET"), opts), (err: unknown) => {
    assert.ok(err instanceof UpstreamError);
    assert.equal(err.kind, "closed");
    assert.equal(err.phase, "head");
    assert.equal(err.written, true);
    return true;
  });
  assert.equal(opts.stats.staleResends, 0);
  assert.equal(factory.connects, 1);
  assert.deepEqual(opts.onFinish.calls, []);
  pool.close();
});

Deno.test("send never resends a written POST or PATCH, with or without body", async () => {
  for (
    const req of [
      request("POST"),
      request("PATCH"),
      request("POST", bytes("data")),
      request("PUT", bytes("data")),
    ]
  ) {
    const { pool, factory } = await stalePool(5000, [new FakeSocket(bytes(OK))]);
    const opts = options();
    await assert.rejects(send(pool, req, opts), UpstreamError);
    assert.equal(opts.stats.staleResends, 0, req.method);
    assert.equal(factory.connects, 1);
    pool.close();
  }
});

Deno.test("send resends any method when nothing was written", async () => {
  const fresh = new FakeSocket(bytes(OK));
  const { pool, stale } = await stalePool(0, [fresh]);
  stale.writeError = new Deno.errors.BrokenPipe("Broken pipe (os error 32)");
  const opts = options();
  const res = await send(pool, request("POST", bytes("data")), opts);
  assert.equal(res.status, 200);
  assert.equal(opts.stats.staleResends, 1);
  assert.match(
    new TextDecoder().decode(fresh.writes[0]),
    /^POST \/x HTTP\/1\.1\r\n[^]*\r\n\r\ndata$/,
  );
  pool.close();
});

Deno.test("send resends only once", async () => {
  const { pool, factory } = await stalePool(2000, [new FakeSocket(new Uint8Array(0))]);
  const opts = options();
  await assert.rejects(send(pool, request("GET"), opts), UpstreamError);
  assert.equal(opts.stats.staleResends, 1);
  assert.equal(factory.connects, 2);
  pool.close();
});

Deno.test("send does not resend when a fresh connection fails", async () => {
  const pool = new ConnPool(new FakeFactory([new FakeSocket(new Uint8Array(0))]));
  const opts = options();
  await assert.rejects(send(pool, request("GET"), opts), (err: unknown) => {
    assert.ok(err instanceof UpstreamError);
    assert.equal(err.kind, "closed");
    return true;
  });
  assert.equal(opts.stats.staleResends, 0);
  pool.close();
});

Deno.test("send passes a 101 connection to the caller with the bytes after the head", async () => {
  const req = request("GET");
  const upgrade = { ...req, head: { ...req.head, upgrade: true } };
  const { res, pool, sock, finished } = await exchange(
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x00",
    undefined,
    upgrade,
  );
  assert.equal(res.status, 101);
  assert.ok(res.upgrade);
  assert.equal(res.upgrade.conn, sock);
  assert.deepEqual([...res.upgrade.leftover], [0x81, 0x00]);
  assert.equal(pool.active, 0);
  assert.equal(sock.closed, false);
  assert.deepEqual(finished.calls, [[true, 0]]);
  pool.close();
});

Deno.test("send refuses a 101 to a request that did not ask to upgrade", async () => {
  await assert.rejects(
    exchange("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n"),
    (err: unknown) => err instanceof UpstreamError && err.kind === "malformed",
  );
});

/** The watchdog's timer is unref'd (real sockets keep the loop alive); fakes need this. */
async function keepAlive<T>(p: Promise<T>): Promise<T> {
  const timer = setInterval(() => {}, 1000);
  try {
    return await p;
  } finally {
    clearInterval(timer);
  }
}

Deno.test("send times out waiting for the head: phase head, kind timeout", async () => {
  const sock = new FakeSocket(bytes("HTTP/1.1 200 OK\r\n"));
  sock.hangAtEnd = true;
  const pool = new ConnPool(new FakeFactory([sock]));
  const t0 = Date.now();
  await assert.rejects(
    keepAlive(send(pool, request(), { connectTimeout: 0, responseTimeout: 40 })),
    (err: unknown) => {
      assert.ok(err instanceof UpstreamError);
      assert.equal(err.phase, "head");
      assert.equal(err.kind, "timeout");
      assert.equal(err.timeout, true);
      return true;
    },
  );
  assert.ok(Date.now() - t0 >= 39);
  assert.equal(sock.closed, true);
  assert.equal(pool.active, 0);
  pool.close();
});

Deno.test("send times out reading the rest of a small body: phase body", async () => {
  const sock = new FakeSocket(bytes("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"));
  sock.hangAtEnd = true;
  const pool = new ConnPool(new FakeFactory([sock]));
  await assert.rejects(
    keepAlive(send(pool, request(), { connectTimeout: 0, responseTimeout: 40 })),
    (err: unknown) => {
      assert.ok(err instanceof UpstreamError);
      assert.equal(err.phase, "body");
      assert.equal(err.kind, "timeout");
      return true;
    },
  );
  assert.equal(pool.active, 0);
  pool.close();
});

Deno.test("send blames the client when its body stalls past the response timeout", async () => {
  // The member waits for the whole body and says nothing.
  const sock = new FakeSocket(new Uint8Array(0));
  sock.hangAtEnd = true;
  const pool = new ConnPool(new FakeFactory([sock]));
  let cancelled = false;
  const stalled = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(bytes("part"));
    },
    cancel() {
      cancelled = true;
    },
  });
  await assert.rejects(
    keepAlive(send(pool, request("POST", stalled, -1), { connectTimeout: 0, responseTimeout: 40 })),
    (err: unknown) => {
      assert.ok(err instanceof UpstreamError);
      assert.equal(err.phase, "write");
      assert.equal(err.kind, "client");
      assert.equal(err.timeout, true);
      return true;
    },
  );
  assert.equal(cancelled, true);
  assert.match(new TextDecoder().decode(sock.writes[1]), /^4\r\npart\r\n$/);
  pool.close();
});

Deno.test("send wraps a failing request body stream as kind client with its cause", async () => {
  // The member waits for the body: the client's failure ends the exchange at once.
  const sock = new FakeSocket(new Uint8Array(0));
  sock.hangAtEnd = true;
  const pool = new ConnPool(new FakeFactory([sock]));
  const boom = new Error("upload aborted");
  const failing = new ReadableStream<Uint8Array>({
    pull(c) {
      c.error(boom);
    },
  });
  await assert.rejects(send(pool, request("POST", failing, 10), options()), (err: unknown) => {
    assert.ok(err instanceof UpstreamError);
    assert.equal(err.kind, "client");
    assert.equal(err.cause, boom);
    return true;
  });
  pool.close();
});

Deno.test("send returns a member's answer given before the body was sent, and stops the upload", async () => {
  const sock = new FakeSocket(bytes("HTTP/1.1 413 Too Big\r\nContent-Length: 2\r\n\r\nno"));
  sock.hangAtEnd = true;
  const pool = new ConnPool(new FakeFactory([sock]));
  let cancelled = false;
  let pulls = 0;
  const slow = new ReadableStream<Uint8Array>({
    async pull(c) {
      pulls++;
      // The client sends one piece, then is slow: the answer must not wait for it.
      if (pulls > 1) await new Promise((r) => setTimeout(r, 50));
      c.enqueue(bytes("part"));
    },
    cancel() {
      cancelled = true;
    },
  });
  const res = await send(pool, request("POST", slow, -1), options());
  assert.equal(res.status, 413);
  assert.equal(res.bodyCut, true);
  assert.equal(new TextDecoder().decode(res.body as Uint8Array), "no");
  // Neither connection can be kept: the member's is closed at once.
  assert.equal(sock.closed, true);
  assert.equal(pool.active, 0);
  await new Promise((r) => setTimeout(r, 80));
  assert.equal(cancelled, true);
  pool.close();
});
