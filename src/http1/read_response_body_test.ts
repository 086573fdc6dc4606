import assert from "node:assert/strict";
import { bytes, FakeFactory, FakeSocket } from "./_fake_socket.ts";
import { ConnPool } from "./conn_pool.ts";
import { DRAIN_BYTES, DRAIN_MS } from "./read_response_body.ts";
import { send } from "./send.ts";
import type { BodyReader, FinishListener, OutboundRequest, UpstreamResponse } from "./types.ts";
import { UpstreamError } from "./upstream_error.ts";
import { READ_BUFFER } from "./member_conn.ts";
import { freeViews, giveView, takeView, VIEW_SIZE } from "./view_buffers.ts";
import { waitUntil } from "../../tests/_support/wait.ts";

const GET: OutboundRequest = {
  method: "GET",
  target: "/x",
  head: {
    headers: new Headers(),
    host: "m",
    clientHost: "c",
    peer: "",
    peerTrusted: false,
    proto: "http",
    upgrade: false,
  },
  body: null,
  bodyLength: -1,
};

class Finished implements FinishListener {
  calls: [boolean, number, boolean][] = [];
  bodyFinished(ok: boolean, n: number, cancelled = false): void {
    this.calls.push([ok, n, cancelled]);
  }
}

async function exchange(
  response: Uint8Array,
  pieces: number[],
): Promise<{ res: UpstreamResponse; pool: ConnPool; sock: FakeSocket; finished: Finished }> {
  const sock = new FakeSocket(response, pieces);
  const pool = new ConnPool(new FakeFactory([sock]));
  const finished = new Finished();
  const res = await send(pool, GET, {
    connectTimeout: 1000,
    responseTimeout: 1000,
    onFinish: finished,
  });
  return { res, pool, sock, finished };
}

/** All chunks of `reader` up to its end, and how many reads gave data. */
async function drain(
  reader: BodyReader,
  view = false,
): Promise<{ body: Uint8Array; reads: number }> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const chunk = await (view ? reader.readView!() : reader.read());
    if (chunk === null) break;
    assert.ok(chunk.length > 0, "never an empty chunk");
    parts.push(chunk.slice());
    total += chunk.length;
  }
  const body = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    body.set(p, at);
    at += p.length;
  }
  return { body, reads: parts.length };
}

function withBody(head: string, body: Uint8Array): Uint8Array {
  const h = bytes(head);
  const out = new Uint8Array(h.length + body.length);
  out.set(h);
  out.set(body, h.length);
  return out;
}

const BIG = 200_000;
function big(): Uint8Array {
  const b = new Uint8Array(BIG);
  for (let i = 0; i < BIG; i++) b[i] = i % 251;
  return b;
}

Deno.test("reader: a Content-Length body over 64 KiB read in chunks, then null; connection pooled", async () => {
  const body = big();
  const { res, pool, finished } = await exchange(
    withBody(`HTTP/1.1 200 OK\r\nContent-Length: ${BIG}\r\n\r\n`, body),
    [4096, 70000, 1000],
  );
  assert.ok(res.reader !== undefined);
  const got = await drain(res.reader);
  assert.deepEqual(got.body, body);
  assert.ok(got.reads > 2);
  assert.equal(await res.reader.read(), null, "the end stays the end");
  assert.equal(pool.idle, 1);
  assert.deepEqual(finished.calls, [[true, BIG, false]]);
  pool.close();
});

Deno.test("reader: a chunked body in pieces decoded, then null; connection pooled", async () => {
  const { res, pool, finished } = await exchange(
    bytes(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
    ),
    [50, 3, 7],
  );
  assert.ok(res.reader !== undefined);
  const got = await drain(res.reader);
  assert.equal(new TextDecoder().decode(got.body), "hello world");
  assert.equal(pool.idle, 1);
  assert.deepEqual(finished.calls, [[true, 11, false]]);
  pool.close();
});

Deno.test("reader: a body cut before its Content-Length rejects (never a clean end) and closes", async () => {
  const { res, pool, sock, finished } = await exchange(
    withBody(`HTTP/1.1 200 OK\r\nContent-Length: ${BIG}\r\n\r\n`, big().subarray(0, 90_000)),
    [65536],
  );
  assert.ok(res.reader !== undefined);
  await assert.rejects(drain(res.reader), UpstreamError);
  assert.equal(pool.idle, 0);
  assert.equal(sock.closed, true);
  assert.equal(finished.calls.length, 1);
  assert.equal(finished.calls[0][0], false);
  await assert.rejects(res.reader.read(), UpstreamError, "no clean end after a failure");
  pool.close();
});

Deno.test("reader: a close-delimited body ends at the close; the connection is not kept", async () => {
  const { res, pool, finished } = await exchange(
    bytes("HTTP/1.1 200 OK\r\n\r\nuntil the close"),
    [19, 4],
  );
  assert.ok(res.reader !== undefined);
  const got = await drain(res.reader);
  assert.equal(new TextDecoder().decode(got.body), "until the close");
  assert.equal(pool.idle, 0);
  assert.deepEqual(finished.calls, [[true, 15, false]]);
  pool.close();
});

Deno.test("reader: cancel reports a cancel at once, later reads reject, the rest is drained", async () => {
  const { res, pool, sock, finished } = await exchange(
    withBody(`HTTP/1.1 200 OK\r\nContent-Length: ${BIG}\r\n\r\n`, big()),
    [65536],
  );
  assert.ok(res.reader !== undefined);
  assert.ok((await res.reader.read())!.length > 0);
  res.reader.cancel();
  assert.equal(finished.calls.length, 1);
  assert.deepEqual([finished.calls[0][0], finished.calls[0][2]], [false, true]);
  await assert.rejects(res.reader.read(), UpstreamError);
  await waitUntil(() => pool.idle === 1, { what: "the connection back in the pool" });
  assert.equal(pool.idle, 1, "the rest of the body was read: the connection is kept");
  assert.equal(sock.closed, false);
  pool.close();
});

Deno.test("reader: the same body as a stream when `body` is asked for instead", async () => {
  const body = big();
  const { res, pool } = await exchange(
    withBody(`HTTP/1.1 200 OK\r\nContent-Length: ${BIG}\r\n\r\n`, body),
    [30000],
  );
  assert.ok(res.body instanceof ReadableStream);
  assert.deepEqual(await new Response(res.body).bytes(), body);
  assert.equal(pool.idle, 1);
  pool.close();
});

Deno.test("reader: views of the read buffer, no copies; the connection is pooled only at the null", async () => {
  const body = big();
  const { res, pool, finished } = await exchange(
    withBody(`HTTP/1.1 200 OK\r\nContent-Length: ${BIG}\r\n\r\n`, body),
    [4096, 70000, 1000, 200000],
  );
  const reader = res.reader!;
  const first = await reader.readView!();
  assert.ok(first !== null);
  const n = first.length;
  const second = await reader.readView!();
  const third = await reader.readView!();
  // Direct reads land in the connection's own buffer, grown once for large reads.
  assert.equal(second!.buffer, third!.buffer);
  assert.ok(second!.buffer.byteLength >= 65536);
  assert.equal(second!.byteOffset, 0);
  const m = n + second!.length + third!.length;
  assert.deepEqual(third, body.subarray(n + second!.length, m));
  const rest = await drain(reader, true);
  assert.deepEqual(rest.body, body.subarray(m));
  assert.equal(pool.idle, 1);
  assert.deepEqual(finished.calls, [[true, BIG, false]]);
  pool.close();
});

Deno.test("reader: the last view stays intact until the next call gives null", async () => {
  const { res, pool, finished } = await exchange(
    bytes(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
    ),
    [50, 3, 7],
  );
  const got = await drain(res.reader!, true);
  assert.equal(new TextDecoder().decode(got.body), "hello world");
  assert.equal(pool.idle, 1);
  assert.deepEqual(finished.calls, [[true, 11, false]]);

  const last = await exchange(
    bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
    [50, 100],
  );
  const view = await last.res.reader!.readView!();
  assert.equal(new TextDecoder().decode(view!), "abc");
  // Still checked out: nobody else can read into the buffer under the view.
  assert.equal(last.pool.idle, 0);
  assert.equal(last.finished.calls.length, 0);
  assert.equal(await last.res.reader!.readView!(), null);
  assert.equal(last.pool.idle, 1);
  last.pool.close();
  pool.close();
});

Deno.test("reader: large views come from a lent 256 KiB buffer, given back at the body's end", async () => {
  const size = 600_000;
  const body = new Uint8Array(size);
  for (let i = 0; i < size; i++) body[i] = i % 253;
  const { res, pool } = await exchange(
    withBody(`HTTP/1.1 200 OK\r\nContent-Length: ${size}\r\n\r\n`, body),
    [4096, 1 << 20],
  );
  const reader = res.reader!;
  const first = await reader.readView!(); // what came with the head, in the connection's buffer
  const second = await reader.readView!();
  assert.equal(second!.length, VIEW_SIZE, "one read brings up to 256 KiB");
  assert.equal(second!.buffer.byteLength, VIEW_SIZE);
  const rest = await drain(reader, true);
  assert.equal(first!.length + second!.length + rest.body.length, size);
  assert.deepEqual(rest.body, body.subarray(first!.length + second!.length));
  const again = takeView();
  assert.equal(again.buffer, second!.buffer, "given back for the next body");
  giveView(again);
  const conn = pool.acquire()!;
  assert.equal(conn.buf.length, READ_BUFFER, "the idle connection keeps its own buffer only");
  pool.release(conn, false);
  pool.close();
});

Deno.test("reader: a cancel with more than DRAIN_BYTES to come closes the connection", async () => {
  const size = DRAIN_BYTES + 400_000;
  const { res, pool, sock, finished } = await exchange(
    withBody(`HTTP/1.1 200 OK\r\nContent-Length: ${size}\r\n\r\n`, new Uint8Array(size)),
    [4096, 300_000],
  );
  const reader = res.reader!;
  const a = await reader.readView!();
  const b = await reader.readView!(); // now in the lent buffer
  const before = freeViews();
  reader.cancel();
  assert.equal(freeViews(), before, "not given back on a close");
  assert.equal(pool.idle, 0);
  assert.ok(sock.closed);
  assert.deepEqual(finished.calls, [[false, a!.length + b!.length, true]]);
  pool.close();
});

Deno.test("reader: a cancel with the rest within DRAIN_BYTES reads it and keeps the connection", async () => {
  const size = 900_000;
  const { res, pool, sock, finished } = await exchange(
    withBody(`HTTP/1.1 200 OK\r\nContent-Length: ${size}\r\n\r\n`, new Uint8Array(size)),
    [4096, 100_000],
  );
  sock.hangAtEnd = true; // the member keeps the connection open after its answer
  const reader = res.reader!;
  const first = await reader.readView!();
  reader.cancel();
  // The client's end is reported at once: a cancel, not the member's fault.
  assert.deepEqual(finished.calls, [[false, first!.length, true]]);
  await waitUntil(() => pool.idle === 1, { what: "the connection back in the pool" });
  assert.equal(pool.idle, 1, "drained and pooled");
  assert.equal(sock.closed, false);
  const conn = pool.acquire()!;
  assert.equal(conn.buf.length, READ_BUFFER);
  pool.release(conn, false);
  pool.close();
});

Deno.test("reader: a drain that does not end within DRAIN_MS closes the connection", async () => {
  const size = 500_000;
  const sent = withBody(`HTTP/1.1 200 OK\r\nContent-Length: ${size}\r\n\r\n`, new Uint8Array(size));
  const { res, pool, sock } = await exchange(sent.subarray(0, 200_000), [4096, 100_000]);
  sock.hangAtEnd = true; // 300,000 bytes never come
  const reader = res.reader!;
  await reader.readView!();
  reader.cancel();
  const t0 = performance.now();
  await waitUntil(() => sock.closed, { what: "the connection closed", timeoutMs: DRAIN_MS * 3 });
  assert.ok(sock.closed, "closed at the drain's deadline");
  assert.ok(performance.now() - t0 >= DRAIN_MS * 0.9);
  assert.equal(pool.idle, 0);
  pool.close();
});
