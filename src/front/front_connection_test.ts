import assert from "node:assert/strict";
import { type Answer, FrontAnswer } from "./answer.ts";
import { type ConnObserver, FrontConnection, type FrontHandler } from "./front_connection.ts";
import type { FrontRequest } from "./front_request.ts";

const enc = new TextEncoder();

/** Books kept by the observer, as the server's connection tracker would. */
class Books implements ConnObserver {
  events: string[] = [];
  requestStarted(): void {
    this.events.push("started");
  }
  requestDone(): void {
    this.events.push("done");
  }
  linger(): void {
    this.events.push("linger");
  }
  upgraded(): void {
    this.events.push("upgraded");
  }
  halfClosed(): void {
    this.events.push("half-closed");
  }
}

/** Echoes method, target, a few fields and the body; `/slow` answers after 30 ms. */
class Echo implements FrontHandler {
  draining = false;
  seen: string[] = [];
  async serve(req: FrontRequest): Promise<Answer> {
    this.seen.push(`${req.method} ${req.target}`);
    if (req.target === "/slow") await new Promise((r) => setTimeout(r, 30));
    if (req.target === "/stream") {
      const parts = ["ab", "cde"];
      const body = new ReadableStream<Uint8Array>({
        pull(c) {
          const p = parts.shift();
          if (p === undefined) c.close();
          else c.enqueue(enc.encode(p));
        },
      });
      return new FrontAnswer(200, [["content-type", "text/plain"]], body);
    }
    if (req.target === "/early") return new Response("early\n", { status: 413 });
    let body = "";
    if (req.body !== null) {
      body = new TextDecoder().decode(await new Response(req.body).arrayBuffer());
    }
    return new FrontAnswer(
      200,
      [["x-host", req.headers.get("host") ?? "-"]],
      enc.encode(`${req.method} ${req.target} [${body}]`),
    );
  }
  failed(): Answer {
    return new Response("oops", { status: 500 });
  }
  /** `seen` entries whose answers were written when `answered` was called. */
  answeredAt: number[] = [];
  answered(): void {
    this.answeredAt.push(this.seen.length);
  }
}

/** Serves one connection with `handler`, writes `input` (pieces), and reads until close. */
async function talk(
  input: string[],
  handler = new Echo(),
  books = new Books(),
): Promise<{ out: string; handler: Echo; books: Books }> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted = listener.accept();
  const client = await Deno.connect({ hostname: "127.0.0.1", port: listener.addr.port });
  const server = await accepted;
  listener.close();
  const front = new FrontConnection(server, handler, books, false);
  for (const piece of input) {
    await client.write(enc.encode(piece));
    await new Promise((r) => setTimeout(r, 5));
  }
  let out = "";
  const buf = new Uint8Array(65536);
  const timer = setTimeout(() => front.kill(), 2000);
  try {
    for (;;) {
      const n = await client.read(buf);
      if (n === null) break;
      out += String.fromCharCode(...buf.subarray(0, n));
    }
  } catch {
    // reset
  }
  clearTimeout(timer);
  client.close();
  await front.finished;
  return { out, handler, books };
}

/** Status lines and bodies of the responses in `out` (Content-Length or chunked). */
function statuses(out: string): string[] {
  return [...out.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]);
}

Deno.test("front: pipelined requests are answered in order, the last one closes", async () => {
  const { out, handler, books } = await talk([
    "GET /slow HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n" +
    "POST /c HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nConnection: close\r\n\r\nxyz",
  ]);
  assert.deepEqual(handler.seen, ["GET /slow", "GET /b", "POST /c"]);
  const bodies = [...out.matchAll(/\r\n\r\n([A-Z]+ \/\w+ \[\w*\])/g)].map((m) => m[1]);
  assert.deepEqual(bodies, ["GET /slow []", "GET /b []", "POST /c [xyz]"]);
  assert.match(out, /connection: close\r\n\r\nPOST \/c \[xyz\]$/);
  assert.deepEqual(books.events, ["started", "done", "started", "done", "started", "done"]);
  // Told after each answer was written, before the next request was served.
  assert.deepEqual(handler.answeredAt, [1, 2, 3]);
});

Deno.test("front: HTTP/1.0 closes unless keep-alive is asked; 1.1 stays open", async () => {
  const plain10 = await talk(["GET /a HTTP/1.0\r\n\r\n"]);
  assert.match(plain10.out, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(plain10.out, /connection: close\r\n/);
  const kept = await talk([
    "GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    "GET /b HTTP/1.0\r\n\r\n",
  ]);
  assert.deepEqual(kept.handler.seen, ["GET /a", "GET /b"]);
  assert.match(kept.out, /connection: keep-alive\r\n/);
  // A stream to an HTTP/1.0 client ends with the connection (no chunked coding).
  const s10 = await talk(["GET /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"]);
  assert.match(s10.out, /connection: close\r\n\r\nabcde$/);
  const s11 = await talk(["GET /stream HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"]);
  assert.match(s11.out, /transfer-encoding: chunked\r\n/);
  assert.match(s11.out, /\r\n\r\n2\r\nab\r\n3\r\ncde\r\n0\r\n\r\n$/);
});

Deno.test("front: chunked bodies (trailers dropped), 100-continue, empty lines before a request", async () => {
  const { out } = await talk([
    "\r\nPOST /u HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
    "3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nX-Trailer: no\r\n\r\n",
    "POST /e HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nExpect: 100-continue\r\n" +
    "Connection: close\r\n\r\n",
    "ok",
  ]);
  assert.match(out, /POST \/u \[abcde\]/);
  assert.match(out, /HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
  assert.match(out, /POST \/e \[ok\]$/);
});

Deno.test("front: framing tricks get 400, oversize heads 414 or 431; the connection closes, nothing reaches the handler", async () => {
  for (
    const bad of [
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a\r\nUpgrade: h2c\r\nConnection: upgrade\r\n\r\n",
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
    ]
  ) {
    const { out, handler } = await talk([bad]);
    assert.match(out, /^HTTP\/1\.1 400 Bad Request\r\n/, JSON.stringify(bad.slice(0, 60)));
    assert.match(out, /connection: close\r\n/);
    assert.deepEqual(handler.seen, []);
  }
  // Past what the front reads: a request line over 64 KiB is 414, more field lines 431.
  for (
    const [bad, status] of [
      ["GET /" + "a".repeat(70_000) + " HTTP/1.1\r\n\r\n", "414 URI Too Long"],
      [
        "GET / HTTP/1.1\r\n" + "X: v\r\n".repeat(129) + "\r\n",
        "431 Request Header Fields Too Large",
      ],
      [
        "GET / HTTP/1.1\r\nX: " + "v".repeat(70_000) + "\r\n\r\n",
        "431 Request Header Fields Too Large",
      ],
    ] as const
  ) {
    const { out, handler } = await talk([bad]);
    assert.ok(out.startsWith(`HTTP/1.1 ${status}\r\n`), out.slice(0, 60));
    assert.match(out, /connection: close\r\n/);
    assert.deepEqual(handler.seen, []);
  }
  // A broken chunked body ends the request: the handler sees its body fail.
  const broken = await talk([
    "POST /u HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0x3\r\nabc\r\n0\r\n\r\n",
  ]);
  assert.deepEqual(statuses(broken.out), ["500"]);
});

Deno.test("front: an answer before the body is read closes the connection after it", async () => {
  const { out, books } = await talk([
    "POST /early HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n",
    "x".repeat(1000),
  ]);
  assert.match(out, /^HTTP\/1\.1 413 Content Too Large\r\n/);
  assert.match(out, /connection: close\r\n/);
  assert.match(out, /\r\n\r\nearly\n$/);
  assert.deepEqual(books.events, ["started", "linger"]);
});

Deno.test("front: a small body nobody read is skipped and the connection stays open", async () => {
  class Ignore extends Echo {
    override serve(req: FrontRequest): Promise<Answer> {
      this.seen.push(`${req.method} ${req.target}`);
      return Promise.resolve(new FrontAnswer(200, [], enc.encode("ignored")));
    }
  }
  const { out, handler } = await talk([
    "POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc" +
    "POST /b HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nxyz\r\n0\r\n\r\n" +
    "GET /c HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
  ], new Ignore());
  assert.deepEqual(handler.seen, ["POST /a", "POST /b", "GET /c"]);
  assert.deepEqual(statuses(out), ["200", "200", "200"]);
});

/** A served connection and its client, for the drain tests. */
async function pair(books = new Books()) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted = listener.accept();
  const client = await Deno.connect({ hostname: "127.0.0.1", port: listener.addr.port });
  const server = await accepted;
  listener.close();
  const front = new FrontConnection(server, new Echo(), books, false);
  return { client, front, books };
}

/** Reads until the end (`end`) or an error (`reset`), with what came before it. */
async function readToEnd(c: Deno.Conn): Promise<{ out: string; how: "end" | "reset" }> {
  let out = "";
  const buf = new Uint8Array(65536);
  try {
    for (;;) {
      const n = await c.read(buf);
      if (n === null) return { out, how: "end" };
      out += String.fromCharCode(...buf.subarray(0, n));
    }
  } catch {
    return { out, how: "reset" };
  }
}

const GET = (path: string) => enc.encode(`GET ${path} HTTP/1.1\r\nHost: a\r\n\r\n`);

Deno.test("front: draining, an idle connection carries one more request, answered with Connection: close", async () => {
  const { client, front, books } = await pair();
  const drained = front.drain(10_000);
  await new Promise((r) => setTimeout(r, 20));
  await client.write(GET("/a"));
  const { out, how } = await readToEnd(client);
  assert.equal(how, "end");
  assert.deepEqual(statuses(out), ["200"]);
  assert.match(out, /connection: close\r\n/);
  // The server sent its end first and waits for the client's: closing ours ends it.
  assert.deepEqual(books.events, ["started", "done", "half-closed"]);
  client.close();
  await drained;
});

Deno.test("front: draining, pipelined requests are all answered, the last with Connection: close", async () => {
  const { client, front } = await pair();
  const drained = front.drain(10_000);
  await client.write(
    enc.encode(new TextDecoder().decode(GET("/slow")) + "GET /b HTTP/1.1\r\nHost: a\r\n\r\n"),
  );
  const { out } = await readToEnd(client);
  assert.deepEqual(statuses(out), ["200", "200"]);
  assert.equal(out.match(/connection: close/g)?.length, 1);
  assert.match(out, /connection: close\r\n\r\nGET \/b \[\]$/);
  client.close();
  await drained;
});

Deno.test("front: draining, a connection idle past the grace is half-closed, not reset, within 0.75-1.25 times it", async () => {
  const { client, front, books } = await pair();
  const t0 = performance.now();
  const drained = front.drain(80);
  const { out, how } = await readToEnd(client);
  const waited = performance.now() - t0;
  assert.equal(out, "");
  assert.equal(how, "end");
  assert.ok(waited >= 60 && waited < 300, `closed after ${waited} ms`);
  assert.deepEqual(books.events, ["half-closed"]);
  // The server still reads what the client sends (a request that crossed its end): no reset.
  await client.write(GET("/late"));
  await new Promise((r) => setTimeout(r, 20));
  client.close();
  await drained;
});

Deno.test("front: draining, a request that arrived just as the grace ends is answered", async () => {
  const { client, front } = await pair();
  // random() = 0: the grace ends at 0.75 * 40 = 30 ms.
  const drained = front.drain(40, () => 0);
  await new Promise((r) => setTimeout(r, 20));
  await client.write(GET("/just-in-time"));
  // The request is in the server's socket; the event loop sees the grace timer and the read
  // together once this busy wait ends.
  const until = performance.now() + 20;
  while (performance.now() < until) { /* busy */ }
  const { out, how } = await readToEnd(client);
  assert.equal(how, "end");
  assert.deepEqual(statuses(out), ["200"]);
  assert.match(out, /GET \/just-in-time \[\]$/);
  client.close();
  await drained;
});
