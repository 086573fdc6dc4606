/**
 * Misbehaving clients: oversize heads, slow senders, aborted uploads and downloads, heads that
 * never finish. None of them changes a member's health. Loopback only, bounded.
 */
import assert from "node:assert/strict";
import { bytesOf, latin1 } from "./_support/bytes.ts";
import {
  adminFetch,
  app,
  disposableList,
  members,
  proxy,
  scalwsYaml,
  sleep,
  startScalwsd,
  waitUntil,
} from "./_support/mod.ts";
import { closeQuietly, exchange, responses } from "./_support/raw_exchange.ts";
import { RecordingMember, strictRequest } from "./_support/recording_member.ts";
import type { Scalwsd } from "./_support/scalwsd.ts";

/** Pool p of `addresses` (response_timeout 300ms, one retry) behind application a. */
function config(addresses: string[], server: Record<string, unknown> = {}): string {
  return scalwsYaml({
    server,
    upstreams: {
      p: {
        members: members(...addresses),
        keepalive: 0,
        retries: 1,
        passive_health: { failures: 1, cooldown: "1h" },
      },
    },
    apps: [app(proxy("p", { response_timeout: "300ms" }))],
  });
}

/** One member twice, by IP and by name: a pool of two members. */
function twice(address: string): string[] {
  return [address, address.replace("127.0.0.1", "localhost")];
}

/** The sum of every series of `family` whose labels contain all of `labels`. */
async function metric(s: Scalwsd, family: string, ...labels: string[]): Promise<number> {
  const text = await (await adminFetch(s.adminSocket, "/metrics")).text();
  let sum = 0;
  for (const l of text.split("\n")) {
    if (!l.startsWith(family + "{") || !labels.every((x) => l.includes(x))) continue;
    sum += Number(l.slice(l.lastIndexOf(" ") + 1));
  }
  return sum;
}

/** Both members healthy, no failure counted, no attempt counted as an error. */
async function assertHealthUnchanged(s: Scalwsd, what: string): Promise<void> {
  const pool = await (await adminFetch(s.adminSocket, "/v1/upstreams/p")).json();
  assert.equal(pool.members.length, 2);
  for (const m of pool.members) {
    assert.equal(m.state, "healthy", `${what}: ${m.address}`);
    assert.equal(m.failures, 0, `${what}: ${m.address}`);
  }
  assert.equal(
    await metric(s, "scalws_upstream_requests_total", 'pool="p"', 'class="error"'),
    0,
    what,
  );
}

/** Waits until scalwsd has finished more than `count` client requests. */
async function finished(s: Scalwsd, count: number): Promise<void> {
  await waitUntil(async () => (await metric(s, "scalws_http_requests_total")) > count, {
    what: "scalwsd to finish the request",
    timeoutMs: 3000,
    intervalMs: 10,
  });
}

Deno.test("oversize heads get 431 or 414 from the front and never reach a member; heads under the limit pass", async () => {
  await using member = new RecordingMember();
  await using s = await startScalwsd(config(twice(member.address)));
  const port = Number(new URL(s.url).port);
  const head = (extra: string, target = "/") =>
    bytesOf(`GET ${target} HTTP/1.1\r\nHost: a.test\r\n${extra}\r\n`);
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `X-${i}: v\r\n`).join("");
  // The front reads heads up to 64 KiB and 128 field lines.
  const refused = [
    [head(`X-Big: ${"a".repeat(70_000)}\r\n`), "431 Request Header Fields Too Large"],
    [head(lines(200)), "431 Request Header Fields Too Large"],
    [head("", "/" + "a".repeat(70_000)), "414 URI Too Long"],
  ] as const;
  for (const [bytes, status] of refused) {
    const got = latin1(await exchange(port, bytes));
    assert.ok(got.startsWith(`HTTP/1.1 ${status}\r\n`), got.slice(0, 60));
    assert.match(got, /\r\nconnection: close\r\n/);
  }
  assert.equal(member.conns.length, 0);

  const big = "b".repeat(60_000);
  const passed = [head(`X-Big: ${big}\r\n`), head(lines(100))];
  for (const bytes of passed) {
    assert.deepEqual(responses(await exchange(port, bytes)), [{ status: 200, body: "ok" }]);
  }
  await waitUntil(() => member.conns.every((c) => c.closed), {
    what: "member connections to close",
  });
  const reqs = member.conns.map((c) => latin1(c.bytes));
  assert.equal(reqs.length, 2);
  assert.ok(reqs[0].includes(`\r\nx-big: ${big}\r\n`));
  assert.ok(reqs[1].includes("\r\nx-99: v\r\n"));
});

/** Opens a connection, writes `bytes`, and keeps it open without sending more. */
async function stall(port: number, bytes: Uint8Array): Promise<Deno.TcpConn> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(bytes);
  return conn;
}

/** Reads one response head from `conn` within `ms`; the text read, or "" on EOF. */
async function readResponseHead(conn: Deno.Conn, ms: number): Promise<string> {
  const timer = setTimeout(closeQuietly, ms, conn);
  let text = "";
  try {
    const buf = new Uint8Array(4096);
    while (!text.includes("\r\n\r\n")) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += latin1(buf.subarray(0, n));
    }
  } catch { /* closed by the timer */ }
  clearTimeout(timer);
  return text;
}

Deno.test("an upload that stalls gets 504 at response_timeout; the member's health is unchanged", async () => {
  await using member = new RecordingMember();
  await using s = await startScalwsd(config(twice(member.address)));
  const port = Number(new URL(s.url).port);
  const uploads = [
    // Streamed (over 64 KiB): the member has the head and part of the body.
    `POST /big HTTP/1.1\r\nHost: a.test\r\nContent-Length: 200000\r\n\r\n${"x".repeat(1000)}`,
    // Chunked: streamed too.
    "POST /chunked HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n3e8\r\n" +
    "x".repeat(1000) + "\r\n",
    // Kept for retries (64 KiB or less): read whole before any member is tried.
    `POST /small HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1000\r\n\r\n${"x".repeat(10)}`,
  ];
  for (const bytes of uploads) {
    using conn = await stall(port, bytesOf(bytes));
    const t0 = performance.now();
    const head = await readResponseHead(conn, 3000);
    const took = performance.now() - t0;
    assert.match(head, /^HTTP\/1\.1 504 /, JSON.stringify(head) + " " + took);
    assert.ok(took >= 250 && took < 2000, `answered after ${took.toFixed(0)} ms`);
  }
  await waitUntil(() => member.conns.every((c) => c.closed), {
    what: "member connections to close",
  });
  assert.equal(member.conns.length, 2);
  for (const c of member.conns) assert.equal(strictRequest(c.bytes).complete, false);
  await assertHealthUnchanged(s, "stalled uploads");
});

Deno.test("a client that aborts mid-upload leaves the member's health unchanged", async () => {
  await using member = new RecordingMember();
  await using s = await startScalwsd(config(twice(member.address)));
  const port = Number(new URL(s.url).port);
  const uploads: [string, boolean][] = [
    // Streamed (over 64 KiB): the member sees the head and part of the body, then a close.
    [
      `POST /big HTTP/1.1\r\nHost: a.test\r\nContent-Length: 200000\r\n\r\n${"x".repeat(100_000)}`,
      true,
    ],
    [
      "POST /chunked HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n" +
      `3e8\r\n${"x".repeat(1000)}\r\n`.repeat(5),
      true,
    ],
    // Kept for retries (64 KiB or less): the member is never contacted.
    [
      `POST /small HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1000\r\n\r\n${"x".repeat(10)}`,
      false,
    ],
  ];
  for (const [bytes, reaches] of uploads) {
    const before = member.conns.length;
    const done = await metric(s, "scalws_http_requests_total");
    using _conn = await stall(port, bytesOf(bytes));
    if (reaches) {
      await waitUntil(() => member.conns.length > before, { what: "the member to see it" });
    } else await sleep(50);
    await finished(s, done);
    assert.equal(member.conns.length, before + (reaches ? 1 : 0));
  }
  await waitUntil(() => member.conns.every((c) => c.closed), {
    what: "member connections to close",
  });
  for (const c of member.conns) assert.equal(strictRequest(c.bytes).complete, false);
  await assertHealthUnchanged(s, "aborted uploads");
});

// A client that goes away mid-download cancels the body: the member gets no verdict.
Deno.test({
  name: "a client that aborts mid-download leaves the member's health unchanged",
}, async () => {
  const chunk = new Uint8Array(65536);
  await using ms = disposableList(
    [0, 1].map(() =>
      Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
        let sent = 0;
        return new Response(
          new ReadableStream({
            async pull(c) {
              await sleep(5);
              if (sent++ === 32) c.close();
              else c.enqueue(chunk);
            },
          }),
          { headers: { "content-length": String(32 * 65536) } },
        );
      })
    ),
  );
  await using s = await startScalwsd(config(ms.map((m) => `127.0.0.1:${m.addr.port}`)));
  const port = Number(new URL(s.url).port);
  for (let i = 0; i < 4; i++) {
    const done = await metric(s, "scalws_http_requests_total");
    const conn = await stall(port, bytesOf("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"));
    const head = await readResponseHead(conn, 2000);
    closeQuietly(conn);
    assert.match(head, /^HTTP\/1\.1 200 /);
    await finished(s, done);
  }
  await assertHealthUnchanged(s, "aborted downloads");
});

// A client that sends its head slowly, or never finishes it, is cut off after
// `server.limits.header_read_timeout` (Deno.serve has no such timeout; the listener drives each
// connection itself). Like nginx's client_header_timeout, the connection is closed without an
// answer, and nothing reaches a member.
Deno.test("a client that never finishes its head is cut off at header_read_timeout", async () => {
  await using member = new RecordingMember();
  await using s = await startScalwsd(
    config(twice(member.address), { limits: { header_read_timeout: "300ms" } }),
  );
  const start = performance.now();
  using conn = await stall(Number(new URL(s.url).port), bytesOf("GET / HTTP/1.1\r\nHost: a"));
  const head = await readResponseHead(conn, 5_000);
  const ms = performance.now() - start;
  assert.equal(head, "", "closed without an answer");
  assert.ok(ms >= 250 && ms < 4_000, `cut off after ${ms} ms`);
  assert.equal(member.conns.length, 0);
});

/**
 * A member on a raw socket answering every request with `size` bytes, keep-alive; it counts the
 * connections it accepted and the answers it finished writing.
 */
class CountingMember implements AsyncDisposable {
  readonly listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  readonly conns: Deno.Conn[] = [];
  written = 0;
  readonly #done: Promise<void>;
  constructor(size: number) {
    const answer = new Uint8Array(size + 64);
    const head = bytesOf(`HTTP/1.1 200 OK\r\nContent-Length: ${size}\r\n\r\n`);
    answer.set(head);
    const bytes = answer.subarray(0, head.length + size);
    this.#done = this.#accept(bytes);
  }
  get address(): string {
    return `127.0.0.1:${(this.listener.addr as Deno.NetAddr).port}`;
  }
  async #accept(answer: Uint8Array): Promise<void> {
    for await (const conn of this.listener) {
      this.conns.push(conn);
      this.#serve(conn, answer);
    }
  }
  async #serve(conn: Deno.Conn, answer: Uint8Array): Promise<void> {
    const buf = new Uint8Array(4096);
    try {
      for (let head = "";;) {
        const n = await conn.read(buf);
        if (n === null) return;
        head += latin1(buf.subarray(0, n));
        if (!head.includes("\r\n\r\n")) continue;
        head = "";
        for (let off = 0; off < answer.length;) off += await conn.write(answer.subarray(off));
        this.written++;
      }
    } catch { /* closed */ }
  }
  async [Symbol.asyncDispose](): Promise<void> {
    this.listener.close();
    for (const c of this.conns) closeQuietly(c);
    await this.#done.catch(() => {});
  }
}

// A client that leaves while at most DRAIN_BYTES (1 MiB) of the member's answer is still to come:
// scalwsd reads the rest and keeps the member connection, so the next requests reuse it.
Deno.test("a client that leaves mid-download with under 1 MiB to come keeps the member connection", async () => {
  await using member = new CountingMember(600_000);
  await using s = await startScalwsd(scalwsYaml({
    upstreams: { p: { members: members(member.address) } },
    apps: [app(proxy("p"))],
  }));
  const port = Number(new URL(s.url).port);
  for (let i = 1; i <= 3; i++) {
    const conn = await stall(port, bytesOf("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"));
    assert.match(await readResponseHead(conn, 2000), /^HTTP\/1\.1 200 /);
    closeQuietly(conn);
    await waitUntil(() => member.written === i, { what: `answer ${i} written`, timeoutMs: 3000 });
    await sleep(100); // the rest of the answer is in loopback buffers: scalwsd reads it at once
  }
  assert.equal(member.conns.length, 1, "one member connection for three cut downloads");
});
