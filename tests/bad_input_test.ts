/**
 * Bad input suite. Client side: smuggling attempts, oversize heads, slow senders and aborted
 * uploads. Member side: an end-to-end fuzz of malformed responses. Admin side: refused PUT
 * bodies. Config side: broken files through `scalwsd check`. Loopback only, bounded.
 */
import assert from "node:assert/strict";
import { adminFetch, type Running, startScalwsd } from "./_harness.ts";
import { seeded as prng } from "../src/base/random.ts";

const enc = new TextEncoder();

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** One char per byte, so that byte offsets and string offsets agree. */
function latin1(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i += 8192) {
    s += String.fromCharCode(...b.subarray(i, Math.min(b.length, i + 8192)));
  }
  return s;
}

function bytesOf(s: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch { /* closed already */ }
}

async function until(what: string, cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await delay(5);
  }
}

// ---------------------------------------------------------------------------------------------
// A member that records the exact bytes of every connection.

/** The bytes one member connection received, and whether the peer has closed it. */
interface Recorded {
  bytes: Uint8Array;
  closed: boolean;
}

/**
 * A raw member that records every connection's bytes and answers `200 ok` once a request
 * looks complete (leniently: the strict reading is the test's). It keeps reading until
 * scalwsd closes the connection, so bytes sent after a request are caught too.
 */
class RecordingMember {
  readonly conns: Recorded[] = [];
  readonly address: string;
  private readonly listener: Deno.TcpListener;
  private readonly open = new Set<Deno.Conn>();
  private readonly tasks = new Set<Promise<void>>();
  private readonly loop: Promise<void>;

  constructor() {
    this.listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.address = `127.0.0.1:${(this.listener.addr as Deno.NetAddr).port}`;
    this.loop = this.accept();
  }

  private async accept(): Promise<void> {
    try {
      for await (const conn of this.listener) {
        this.open.add(conn);
        const t = this.serve(conn).finally(() => {
          this.open.delete(conn);
          this.tasks.delete(t);
        });
        this.tasks.add(t);
      }
    } catch { /* closed */ }
  }

  private async serve(conn: Deno.Conn): Promise<void> {
    const rec: Recorded = { bytes: new Uint8Array(0), closed: false };
    this.conns.push(rec);
    const buf = new Uint8Array(65536);
    let answered = false;
    try {
      for (;;) {
        const n = await conn.read(buf);
        if (n === null) break;
        rec.bytes = concat(rec.bytes, buf.subarray(0, n));
        if (!answered && looksComplete(latin1(rec.bytes))) {
          answered = true;
          await conn.write(enc.encode("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"));
        }
      }
    } catch { /* reset: the recording ends here */ }
    rec.closed = true;
    try {
      conn.close();
    } catch { /* closed */ }
  }

  async close(): Promise<void> {
    this.listener.close();
    await this.loop;
    for (const c of this.open) {
      try {
        c.close();
      } catch { /* closed */ }
    }
    await Promise.all([...this.tasks]);
  }
}

function looksComplete(text: string): boolean {
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) return false;
  const head = text.slice(0, end).toLowerCase();
  const rest = text.slice(end + 4);
  if (head.includes("\r\ntransfer-encoding: chunked")) return rest.endsWith("0\r\n\r\n");
  const cl = /\r\ncontent-length: (\d+)/.exec(head);
  return cl === null || rest.length >= Number(cl[1]);
}

/** A request as a strict member reads it. */
interface StrictRequest {
  method: string;
  target: string;
  body: string;
  /** False when the connection ended before the request did (nothing a member acts on). */
  complete: boolean;
}

// deno-lint-ignore no-control-regex -- field values may hold HTAB, SP, VCHAR, obs-text only
const TOKEN_LINE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+: [^\x00-\x08\x0a-\x1f\x7f]*$/;

/**
 * Reads one connection's bytes the strictest way: CRLF only, one request line, token names,
 * at most one of one Content-Length or `Transfer-Encoding: chunked`, a body that is exactly
 * what the framing says and nothing after it. Anything a lenient parser could read otherwise
 * fails the assertion.
 */
function strictRequest(bytes: Uint8Array): StrictRequest {
  const text = latin1(bytes);
  const end = text.indexOf("\r\n\r\n");
  const headText = end < 0 ? text : text.slice(0, end);
  assert.ok(!/\r(?!\n)|(?<!\r)\n/.test(headText), `bare CR or LF in ${JSON.stringify(headText)}`);
  const lines = headText.split("\r\n");
  const m = /^([A-Z]+) (\/\S*) HTTP\/1\.1$/.exec(lines[0]);
  if (end < 0) {
    return { method: m?.[1] ?? "", target: m?.[2] ?? "", body: "", complete: false };
  }
  assert.ok(m, `request line ${JSON.stringify(lines[0])}`);
  let length = -1;
  let chunked = false;
  let framing = 0;
  for (const line of lines.slice(1)) {
    assert.match(line, TOKEN_LINE);
    const name = line.slice(0, line.indexOf(":")).toLowerCase();
    const value = line.slice(line.indexOf(":") + 2);
    if (name === "content-length") {
      assert.match(value, /^\d+$/);
      length = Number(value);
      framing++;
    } else if (name === "transfer-encoding") {
      assert.equal(value, "chunked");
      chunked = true;
      framing++;
    }
  }
  assert.ok(framing <= 1, `${framing} framing headers in ${JSON.stringify(headText)}`);
  const rest = text.slice(end + 4);
  if (length >= 0) {
    assert.ok(rest.length <= length, `bytes after a ${length}-byte body`);
    return { method: m[1], target: m[2], body: rest, complete: rest.length === length };
  }
  if (!chunked) {
    assert.equal(rest.length, 0, "bytes after a request without a body");
    return { method: m[1], target: m[2], body: "", complete: true };
  }
  // Chunked: each size line lower-case hex and CRLF; an unfinished stream is a prefix.
  let body = "";
  let pos = 0;
  for (;;) {
    const lf = rest.indexOf("\r\n", pos);
    if (lf < 0) {
      assert.match(rest.slice(pos), /^[0-9a-f]*\r?$/);
      return { method: m[1], target: m[2], body, complete: false };
    }
    const sizeLine = rest.slice(pos, lf);
    assert.match(sizeLine, /^[0-9a-f]+$/);
    const size = parseInt(sizeLine, 16);
    pos = lf + 2;
    if (size === 0) {
      const tail = rest.slice(pos);
      assert.ok("\r\n".startsWith(tail), `bytes after the last chunk: ${JSON.stringify(tail)}`);
      return { method: m[1], target: m[2], body, complete: tail === "\r\n" };
    }
    body += rest.slice(pos, pos + size);
    if (rest.length < pos + size + 2) {
      assert.ok("\r\n".startsWith(rest.slice(pos + size)));
      return { method: m[1], target: m[2], body, complete: false };
    }
    assert.equal(rest.slice(pos + size, pos + size + 2), "\r\n");
    pos += size + 2;
  }
}

// ---------------------------------------------------------------------------------------------
// A raw client.

/**
 * Writes `bytes` on a fresh connection and reads until the peer closes, `idleMs` pass without
 * a byte once something arrived, or `deadlineMs` pass. Never throws.
 */
async function exchange(
  port: number,
  bytes: Uint8Array,
  idleMs = 250,
  deadlineMs = 2000,
): Promise<Uint8Array> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  let got: Uint8Array = new Uint8Array(0);
  const stop = () => closeQuietly(conn);
  const deadline = setTimeout(stop, deadlineMs);
  let idle: ReturnType<typeof setTimeout> | undefined;
  try {
    await conn.write(bytes);
    const buf = new Uint8Array(65536);
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      got = concat(got, buf.subarray(0, n));
      clearTimeout(idle);
      idle = setTimeout(stop, idleMs);
    }
  } catch { /* reset, or closed by a timer */ }
  clearTimeout(deadline);
  clearTimeout(idle);
  stop();
  return got;
}

/** Final statuses (1xx skipped) of the responses in `bytes`, with their bodies. */
function responses(bytes: Uint8Array): { status: number; body: string }[] {
  const text = latin1(bytes);
  const out: { status: number; body: string }[] = [];
  let pos = 0;
  while (pos < text.length) {
    const end = text.indexOf("\r\n\r\n", pos);
    if (end < 0) break;
    const head = text.slice(pos, end);
    const status = Number(head.slice(9, 12));
    const cl = /\r\ncontent-length: (\d+)/i.exec(head);
    const length = status < 200 ? 0 : cl ? Number(cl[1]) : text.length - end - 4;
    if (status >= 200) out.push({ status, body: text.slice(end + 4, end + 4 + length) });
    pos = end + 4 + length;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Client side: smuggling attempts.

/** What must happen to one attempt. */
type Expect =
  /** Deno.serve or scalwsd answers 400; no member sees a byte of it. */
  | { kind: "refused" }
  /** Every request the client made reaches a member as exactly one clean request. */
  | { kind: "forwarded"; requests: { method: string; path: string; body: string }[] }
  /** The client's body is broken: no 2xx, and no member holds a complete request. */
  | { kind: "cut" };

interface SmuggleCase {
  name: string;
  /** Builds the bytes for request target prefix `t` (`/c/N`) and smuggled prefix `s`. */
  bytes: (t: string, s: string) => string;
  expect: Expect;
}

const post = (t: string) => `POST ${t} HTTP/1.1\r\nHost: a.test\r\n`;
const get = (t: string) => `GET ${t} HTTP/1.1\r\nHost: a.test\r\n`;
const REFUSED: Expect = { kind: "refused" };
const CUT: Expect = { kind: "cut" };
const one = (method: string, body: string, smuggled = false): Expect => ({
  kind: "forwarded",
  requests: [
    { method, path: "t", body },
    ...(smuggled ? [{ method: "GET", path: "s", body: "" }] : []),
  ],
});

const SMUGGLING: SmuggleCase[] = [
  // Content-Length with Transfer-Encoding, either order (CL.TE and TE.CL).
  {
    name: "CL then TE",
    bytes: (t, s) =>
      post(t) +
      `Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET ${s} HTTP/1.1\r\n\r\n`,
    expect: REFUSED,
  },
  {
    name: "TE then CL",
    bytes: (t, s) =>
      post(t) +
      `Transfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n0\r\n\r\nGET ${s} HTTP/1.1\r\n\r\n`,
    expect: REFUSED,
  },
  // Two Content-Lengths.
  {
    name: "two different Content-Lengths",
    bytes: (t) => post(t) + "Content-Length: 3\r\nContent-Length: 5\r\n\r\nabcde",
    expect: REFUSED,
  },
  {
    name: "a Content-Length list with different values",
    bytes: (t) => post(t) + "Content-Length: 3, 5\r\n\r\nabcde",
    expect: REFUSED,
  },
  {
    // Accepted by Deno.serve as the same length; scalwsd re-frames the body (chunked).
    name: "two equal Content-Lengths",
    bytes: (t) => post(t) + "Content-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
    expect: one("POST", "abc"),
  },
  {
    name: "a signed Content-Length",
    bytes: (t) => post(t) + "Content-Length: +3\r\n\r\nabc",
    expect: REFUSED,
  },
  {
    name: "a hex Content-Length",
    bytes: (t) => post(t) + "Content-Length: 0x3\r\n\r\nabc",
    expect: REFUSED,
  },
  // Obsolete line folding.
  { name: "obs-fold with a space", bytes: (t) => get(t) + "X-A: a\r\n b\r\n\r\n", expect: REFUSED },
  { name: "obs-fold with a tab", bytes: (t) => get(t) + "X-A: a\r\n\tb\r\n\r\n", expect: REFUSED },
  {
    name: "obs-fold hiding a Transfer-Encoding",
    bytes: (t) => post(t) + "Content-Length: 3\r\nX-A: a\r\n Transfer-Encoding: chunked\r\n\r\nabc",
    expect: REFUSED,
  },
  // Bare LF and CR.
  {
    // Deno.serve reads bare LF as line ends; the member gets CRLF only.
    name: "bare LF line ends",
    bytes: (t) => `GET ${t} HTTP/1.1\nHost: a.test\nX-A: v\n\n`,
    expect: one("GET", ""),
  },
  {
    name: "bare LF line ends with a body",
    bytes: (t) => `POST ${t} HTTP/1.1\nHost: a.test\nContent-Length: 3\n\nabc`,
    expect: one("POST", "abc"),
  },
  { name: "a bare CR in the head", bytes: (t) => get(t) + "X-A: a\rb\r\n\r\n", expect: REFUSED },
  {
    name: "a bare CR ending a line",
    bytes: (t) => `GET ${t} HTTP/1.1\rHost: a.test\r\n\r\n`,
    expect: REFUSED,
  },
  // Invalid header names and values.
  { name: "a space in a header name", bytes: (t) => get(t) + "X A: v\r\n\r\n", expect: REFUSED },
  {
    name: "a space before the colon",
    bytes: (t) => post(t) + "Content-Length : 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    expect: REFUSED,
  },
  { name: "brackets in a header name", bytes: (t) => get(t) + "[x]: v\r\n\r\n", expect: REFUSED },
  { name: "NUL in a header name", bytes: (t) => get(t) + "X\x00A: v\r\n\r\n", expect: REFUSED },
  { name: "NUL in a header value", bytes: (t) => get(t) + "X-A: a\x00b\r\n\r\n", expect: REFUSED },
  { name: "an empty header name", bytes: (t) => get(t) + ": v\r\n\r\n", expect: REFUSED },
  { name: "two Host headers", bytes: (t) => get(t) + "Host: b.test\r\n\r\n", expect: REFUSED },
  // Transfer-Encoding variants.
  {
    name: "Transfer-Encoding: xchunked",
    bytes: (t) => post(t) + "Transfer-Encoding: xchunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    expect: REFUSED,
  },
  {
    name: "Transfer-Encoding: chunked, identity",
    bytes: (t) => post(t) + "Transfer-Encoding: chunked, identity\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    expect: REFUSED,
  },
  {
    name: "two Transfer-Encoding headers",
    bytes: (t) =>
      post(t) +
      "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    expect: REFUSED,
  },
  {
    name: "Transfer-Encoding: gzip",
    bytes: (t) => post(t) + "Transfer-Encoding: gzip\r\n\r\nabc",
    expect: REFUSED,
  },
  {
    name: "Transfer-Encoding in HTTP/1.0",
    bytes: (t) =>
      `POST ${t} HTTP/1.0\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n`,
    expect: REFUSED,
  },
  {
    name: "Transfer-Encoding: Chunked (case)",
    bytes: (t) => post(t) + "Transfer-Encoding: Chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    expect: one("POST", "abc"),
  },
  // Chunk-size tricks.
  {
    name: "chunk size 0x3",
    bytes: (t) => post(t) + "Transfer-Encoding: chunked\r\n\r\n0x3\r\nabc\r\n0\r\n\r\n",
    expect: CUT,
  },
  {
    name: "chunk size +3",
    bytes: (t) => post(t) + "Transfer-Encoding: chunked\r\n\r\n+3\r\nabc\r\n0\r\n\r\n",
    expect: CUT,
  },
  {
    name: "chunk size -3",
    bytes: (t) => post(t) + "Transfer-Encoding: chunked\r\n\r\n-3\r\nabc\r\n0\r\n\r\n",
    expect: CUT,
  },
  {
    name: "chunk size overflowing 64 bits",
    bytes: (t) =>
      post(t) + "Transfer-Encoding: chunked\r\n\r\n10000000000000003\r\nabc\r\n0\r\n\r\n",
    expect: CUT,
  },
  {
    name: "chunk data longer than its size",
    bytes: (t, s) =>
      post(t) + `Transfer-Encoding: chunked\r\n\r\n3\r\nabcGET ${s} HTTP/1.1\r\n\r\n\r\n0\r\n\r\n`,
    expect: CUT,
  },
  {
    name: "chunk data shorter than its size",
    bytes: (t) => post(t) + "Transfer-Encoding: chunked\r\n\r\n5\r\nabc\r\n0\r\n\r\n",
    expect: CUT,
  },
  {
    name: "chunk lines ending in bare LF",
    bytes: (t) => post(t) + "Transfer-Encoding: chunked\r\n\r\n3\nabc\n0\n\n",
    expect: CUT,
  },
  {
    name: "chunk extensions and leading zeros",
    bytes: (t) => post(t) + "Transfer-Encoding: chunked\r\n\r\n0003;a=b;c\r\nabc\r\n0;x\r\n\r\n",
    expect: one("POST", "abc"),
  },
  {
    // Trailers are dropped, so a trailer cannot smuggle a header to the member.
    name: "a trailer section",
    bytes: (t) =>
      post(t) + "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nContent-Length: 5\r\n\r\n",
    expect: one("POST", "abc"),
  },
  // What follows a complete request is the client's next request, forwarded on its own.
  {
    name: "a request after a chunked body",
    bytes: (t, s) =>
      post(t) +
      `Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET ${s} HTTP/1.1\r\nHost: a.test\r\n\r\n`,
    expect: one("POST", "", true),
  },
  {
    name: "a request after Content-Length: 0",
    bytes: (t, s) => post(t) + `Content-Length: 0\r\n\r\nGET ${s} HTTP/1.1\r\nHost: a.test\r\n\r\n`,
    expect: one("POST", "", true),
  },
  {
    name: "Connection naming Content-Length",
    bytes: (t) => post(t) + "Content-Length: 3\r\nConnection: content-length\r\n\r\nabc",
    expect: one("POST", "abc"),
  },
  {
    name: "Expect: 100-continue",
    bytes: (t) => post(t) + "Content-Length: 3\r\nExpect: 100-continue\r\n\r\nabc",
    expect: one("POST", "abc"),
  },
];

const SMUGGLE_CONFIG = (member: string) => `
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
upstreams:
  p:
    members: [{address: "${member}"}, {address: "${member.replace("127.0.0.1", "localhost")}"}]
    keepalive: 0
    retries: 1
    passive_health: {failures: 0}
tenants:
  - name: t
    applications:
      - name: a
        domains: [a.test]
        runtime: {type: proxy, upstream: {pool: p}, response_timeout: 500ms}
        routes:
          - path: /single
            runtime:
              type: proxy
              upstream: "http://${member}"
              client: {keepalive: 0}
              response_timeout: 500ms
`;

Deno.test("smuggling attempts are refused, or reach a member as one request it cannot read otherwise", async () => {
  const member = new RecordingMember();
  const s = await startScalwsd(SMUGGLE_CONFIG(member.address));
  const port = Number(new URL(s.url).port);
  try {
    // Each case through the pool (bodies up to 64 KiB kept for retries) and through a single
    // address (bodies streamed), all at once: attempts are told apart by their targets.
    const runs = SMUGGLING.flatMap((c, i) =>
      ["", "/single"].map((prefix) => ({
        c,
        label: `${c.name} via ${prefix || "/"}`,
        t: `${prefix}/c/${i}`,
        s: `${prefix}/s/${i}`,
      }))
    );
    const answers = await Promise.all(
      runs.map((r) => exchange(port, bytesOf(r.c.bytes(r.t, r.s)))),
    );
    await until("member connections to close", () => member.conns.every((c) => c.closed));
    const seen = member.conns.map((c) => ({ bytes: c.bytes, req: strictRequest(c.bytes) }));
    for (const x of seen) {
      assert.ok(
        runs.some((r) => x.req.target === r.t || x.req.target === r.s) || x.bytes.length === 0,
        `a member request no attempt made: ${JSON.stringify(latin1(x.bytes))}`,
      );
    }
    for (let i = 0; i < runs.length; i++) {
      const { c, label, t, s: smuggled } = runs[i];
      const got = responses(answers[i]);
      const mine = seen.filter((x) => x.req.target === t || x.req.target === smuggled);
      const complete = mine.filter((x) => x.req.complete).map((x) => x.req);
      const e = c.expect;
      if (e.kind === "refused") {
        assert.deepEqual(got.map((r) => r.status), [400], label);
        assert.equal(mine.length, 0, `${label}: a member saw ${mine.length} requests`);
      } else if (e.kind === "cut") {
        for (const r of got) assert.ok([400, 504].includes(r.status), `${label}: ${r.status}`);
        assert.deepEqual(complete, [], label);
      } else {
        assert.deepEqual(got, e.requests.map(() => ({ status: 200, body: "ok" })), label);
        assert.deepEqual(
          complete.map((r) => ({ method: r.method, target: r.target, body: r.body })),
          e.requests.map((q) => ({
            method: q.method,
            target: q.path === "t" ? t : smuggled,
            body: q.body,
          })),
          label,
        );
        assert.equal(mine.length, e.requests.length, label);
      }
    }
  } finally {
    await s.close();
    await member.close();
  }
});

// ---------------------------------------------------------------------------------------------
// Client side: oversize heads, slow senders, aborted uploads.

const LIMITS_CONFIG = (member: string) => `
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
  admin: {socket: "{{dir}}/admin.sock"}
upstreams:
  p:
    members: [{address: "${member}"}, {address: "${member.replace("127.0.0.1", "localhost")}"}]
    keepalive: 0
    retries: 1
    passive_health: {failures: 1, cooldown: 1h}
tenants:
  - name: t
    applications:
      - name: a
        domains: [a.test]
        runtime: {type: proxy, upstream: {pool: p}, response_timeout: 300ms}
`;

/** The sum of every series of `family` whose labels contain all of `labels`. */
async function metric(s: Running, family: string, ...labels: string[]): Promise<number> {
  const text = await (await adminFetch(`${s.dir}/admin.sock`, "/metrics")).text();
  let sum = 0;
  for (const l of text.split("\n")) {
    if (!l.startsWith(family + "{") || !labels.every((x) => l.includes(x))) continue;
    sum += Number(l.slice(l.lastIndexOf(" ") + 1));
  }
  return sum;
}

/** Both members healthy, no failure counted, no attempt counted as an error. */
async function assertHealthUnchanged(s: Running, what: string): Promise<void> {
  const pool = await (await adminFetch(`${s.dir}/admin.sock`, "/v1/upstreams/p")).json();
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
async function finished(s: Running, count: number): Promise<void> {
  const end = Date.now() + 3000;
  while ((await metric(s, "scalws_http_requests_total")) <= count) {
    if (Date.now() > end) throw new Error("scalwsd did not finish the request");
    await delay(10);
  }
}

Deno.test("oversize heads get 400 from Deno.serve and never reach a member; heads under the limit pass", async () => {
  const member = new RecordingMember();
  const s = await startScalwsd(LIMITS_CONFIG(member.address));
  const port = Number(new URL(s.url).port);
  try {
    const head = (extra: string, target = "/") =>
      bytesOf(`GET ${target} HTTP/1.1\r\nHost: a.test\r\n${extra}\r\n`);
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `X-${i}: v\r\n`).join("");
    // Deno.serve (hyper) takes heads up to about 64 KiB and 128 field lines.
    const refused = [
      head(`X-Big: ${"a".repeat(70_000)}\r\n`),
      head(lines(200)),
      head("", "/" + "a".repeat(70_000)),
    ];
    for (const bytes of refused) {
      const got = latin1(await exchange(port, bytes));
      assert.match(got, /^HTTP\/1\.1 400 Bad Request\r\n/);
      assert.match(got, /\r\nconnection: close\r\n/);
    }
    assert.equal(member.conns.length, 0);

    const big = "b".repeat(60_000);
    const passed = [head(`X-Big: ${big}\r\n`), head(lines(100))];
    for (const bytes of passed) {
      assert.deepEqual(responses(await exchange(port, bytes)), [{ status: 200, body: "ok" }]);
    }
    await until("member connections to close", () => member.conns.every((c) => c.closed));
    const reqs = member.conns.map((c) => latin1(c.bytes));
    assert.equal(reqs.length, 2);
    assert.ok(reqs[0].includes(`\r\nx-big: ${big}\r\n`));
    assert.ok(reqs[1].includes("\r\nx-99: v\r\n"));
  } finally {
    await s.close();
    await member.close();
  }
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
  const member = new RecordingMember();
  const s = await startScalwsd(LIMITS_CONFIG(member.address));
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
  try {
    for (const bytes of uploads) {
      const conn = await stall(port, bytesOf(bytes));
      try {
        const t0 = performance.now();
        const head = await readResponseHead(conn, 3000);
        const took = performance.now() - t0;
        assert.match(head, /^HTTP\/1\.1 504 /, JSON.stringify(head) + " " + took);
        assert.ok(took >= 250 && took < 2000, `answered after ${took.toFixed(0)} ms`);
      } finally {
        closeQuietly(conn);
      }
    }
    await until("member connections to close", () => member.conns.every((c) => c.closed));
    assert.equal(member.conns.length, 2);
    for (const c of member.conns) assert.equal(strictRequest(c.bytes).complete, false);
    await assertHealthUnchanged(s, "stalled uploads");
  } finally {
    await s.close();
    await member.close();
  }
});

Deno.test("a client that aborts mid-upload leaves the member's health unchanged", async () => {
  const member = new RecordingMember();
  const s = await startScalwsd(LIMITS_CONFIG(member.address));
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
  try {
    for (const [bytes, reaches] of uploads) {
      const before = member.conns.length;
      const done = await metric(s, "scalws_http_requests_total");
      const conn = await stall(port, bytesOf(bytes));
      try {
        if (reaches) await until("the member to see it", () => member.conns.length > before);
        else await delay(50);
      } finally {
        conn.close();
      }
      await finished(s, done);
      assert.equal(member.conns.length, before + (reaches ? 1 : 0));
    }
    await until("member connections to close", () => member.conns.every((c) => c.closed));
    for (const c of member.conns) assert.equal(strictRequest(c.bytes).complete, false);
    await assertHealthUnchanged(s, "aborted uploads");
  } finally {
    await s.close();
    await member.close();
  }
});

// A client that goes away mid-download cancels the body: the member gets no verdict.
Deno.test({
  name: "a client that aborts mid-download leaves the member's health unchanged",
}, async () => {
  const chunk = new Uint8Array(65536);
  const ms = [0, 1].map(() =>
    Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
      let sent = 0;
      return new Response(
        new ReadableStream({
          async pull(c) {
            await delay(5);
            if (sent++ === 32) c.close();
            else c.enqueue(chunk);
          },
        }),
        { headers: { "content-length": String(32 * 65536) } },
      );
    })
  );
  const s = await startScalwsd(
    LIMITS_CONFIG(`127.0.0.1:${ms[0].addr.port}`).replace(
      `{address: "localhost:${ms[0].addr.port}"}`,
      `{address: "127.0.0.1:${ms[1].addr.port}"}`,
    ),
  );
  const port = Number(new URL(s.url).port);
  try {
    for (let i = 0; i < 4; i++) {
      const done = await metric(s, "scalws_http_requests_total");
      const conn = await stall(port, bytesOf("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"));
      const head = await readResponseHead(conn, 2000);
      closeQuietly(conn);
      assert.match(head, /^HTTP\/1\.1 200 /);
      await finished(s, done);
    }
    await assertHealthUnchanged(s, "aborted downloads");
  } finally {
    await s.close();
    for (const m of ms) await m.shutdown();
  }
});

// A client that sends its head slowly, or never finishes it, is cut off after
// `server.limits.header_read_timeout` (Deno.serve has no such timeout; the listener drives each
// connection itself). Like nginx's client_header_timeout, the connection is closed without an
// answer, and nothing reaches a member.
Deno.test("a client that never finishes its head is cut off at header_read_timeout", async () => {
  const member = new RecordingMember();
  const s = await startScalwsd(
    LIMITS_CONFIG(member.address).replace(
      "  admin:",
      "  limits: {header_read_timeout: 300ms}\n  admin:",
    ),
  );
  try {
    const start = performance.now();
    const conn = await stall(Number(new URL(s.url).port), bytesOf("GET / HTTP/1.1\r\nHost: a"));
    try {
      const head = await readResponseHead(conn, 5_000);
      const ms = performance.now() - start;
      assert.equal(head, "", "closed without an answer");
      assert.ok(ms >= 250 && ms < 4_000, `cut off after ${ms} ms`);
    } finally {
      closeQuietly(conn);
    }
    assert.equal(member.conns.length, 0);
  } finally {
    await s.close();
    await member.close();
  }
});

// ---------------------------------------------------------------------------------------------
// Member side: malformed responses end to end.

/** What the client must see for one generated response. */
type FuzzExpect =
  /** scalwsd's own 502: the head was malformed, or a small body broke before it was passed on. */
  | "502"
  /** The head was passed on (status 200), then the body broke. */
  | "truncated"
  /** A broken chunked body: 502 when the break was read before the head was passed on. */
  | "502_or_truncated"
  /** A valid response, passed on intact (guards the generator). */
  | "intact";

interface FuzzCase {
  what: string;
  bytes: Uint8Array;
  expect: FuzzExpect;
  /** For `intact`: the body the client must get. */
  body?: string;
}

class FuzzGen {
  constructor(private readonly r: () => number) {}
  int(n: number): number {
    return Math.floor(this.r() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  token(): string {
    const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_!#$%&'*+.^`|~";
    let t = "x-";
    for (let i = this.int(10); i >= 0; i--) t += chars[this.int(chars.length)];
    return t;
  }
  value(): string {
    let v = "";
    for (let i = this.int(24); i > 0; i--) v += String.fromCharCode(0x21 + this.int(94));
    return v;
  }
  /** Valid header lines (never framing headers), with line end `nl`. */
  fields(nl: string): string[] {
    return Array.from({ length: this.int(6) }, () => `${this.token()}: ${this.value()}${nl}`);
  }
  /** A valid status line and fields, without the blank line. */
  head(nl: string, framing: string[]): string {
    const lines = [...this.fields(nl), ...framing.map((f) => f + nl)];
    for (let i = lines.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [lines[i], lines[j]] = [lines[j], lines[i]];
    }
    return `HTTP/1.1 200 ${this.pick(["OK", "Fine", ""])}`.trimEnd() + nl + lines.join("");
  }
  body(n: number): string {
    let b = "";
    for (let i = 0; i < n; i++) b += String.fromCharCode(0x61 + this.int(26));
    return b;
  }
}

const BAD_STATUS_LINES = [
  "HTTP/1.1 20 OK",
  "HTTP/1.1 2000 OK",
  "HTTP/1.1 099 Low",
  "HTTP/2.0 200 OK",
  "HTTP/1.2 200 OK",
  "http/1.1 200 OK",
  "HTTP/1.1  200 OK",
  "HTTP/1.1 2x0 OK",
  "HTTP/1.1 200OK",
  "HTTP/1.1 200 O\x01K",
  "HTTP/1.1\t200 OK",
  "ICY 200 OK",
  " HTTP/1.1 200 OK",
];

const BAD_FIELDS = [
  "Bad Name: v",
  "NoColon",
  ": empty-name",
  " folded: v",
  "\tfolded: v",
  "X-Ctl: a\x01b",
  "X-Del: a\x7fb",
  "X-Cr: a\rb",
  "X\x00Nul: v",
  "X(paren): v",
  "X@at: v",
];

const BAD_LENGTHS = ["abc", "-1", "1.5", "0x10", "1 2", "", "+5", "1234567890123456", "5, 6"];

/** One generated case; the mix leans to malformed heads, with broken bodies and some valid ones. */
function fuzzCase(g: FuzzGen): FuzzCase {
  const nl = g.int(10) === 0 ? "\n" : "\r\n";
  const k = g.int(100);
  const text = (what: string, t: string, expect: FuzzExpect, body?: string): FuzzCase => ({
    what,
    bytes: bytesOf(t),
    expect,
    body,
  });
  if (k < 12) {
    const line = g.pick(BAD_STATUS_LINES);
    return text(
      `status line ${JSON.stringify(line)}`,
      line + nl + g.fields(nl).join("") + nl,
      "502",
    );
  }
  if (k < 26) {
    const bad = g.pick(BAD_FIELDS);
    const lines = g.fields(nl);
    lines.splice(g.int(lines.length + 1), 0, bad + nl);
    const body = g.body(g.int(20));
    return text(
      `field ${JSON.stringify(bad)}`,
      `HTTP/1.1 200 OK${nl}${lines.join("")}Content-Length: ${body.length}${nl}${nl}${body}`,
      "502",
    );
  }
  if (k < 36) {
    const v = g.pick(BAD_LENGTHS);
    return text(
      `Content-Length ${JSON.stringify(v)}`,
      g.head(nl, [`Content-Length: ${v}`]) + nl + "abc",
      "502",
    );
  }
  if (k < 42) {
    const a = 1 + g.int(50);
    return text(
      "conflicting Content-Lengths",
      g.head(nl, [`Content-Length: ${a}`, `Content-Length: ${a + 1 + g.int(5)}`]) + nl +
        g.body(a + 6),
      "502",
    );
  }
  if (k < 48) {
    return text(
      "Content-Length with Transfer-Encoding",
      g.head(nl, ["Content-Length: 3", "Transfer-Encoding: chunked"]) + nl +
        "3\r\nabc\r\n0\r\n\r\n",
      "502",
    );
  }
  if (k < 52) {
    const te = g.pick(["gzip", "chunked, gzip", "identity", "chunked;q=1", "x-chunked"]);
    return text(
      `Transfer-Encoding ${te}`,
      g.head(nl, [`Transfer-Encoding: ${te}`]) + nl + "abc",
      "502",
    );
  }
  if (k < 56) {
    const big = g.int(2) === 0;
    const t = big
      ? g.head(nl, [`X-Big: ${"v".repeat(65_536 + g.int(10_000))}`])
      : g.head(nl, Array.from({ length: 101 + g.int(50) }, (_, i) => `X-L${i}: v`));
    return text(big ? "head over 64 KiB" : "more than 100 field lines", t + nl, "502");
  }
  if (k < 64) {
    const full = g.head(nl, ["Content-Length: 3"]) + nl + "abc";
    const cut = g.int(full.indexOf(nl + nl) + nl.length);
    return text(`head cut after ${cut} bytes`, full.slice(0, cut), "502");
  }
  if (k < 67) {
    return text(
      "101 to a plain request",
      `HTTP/1.1 101 Switching Protocols${nl}Upgrade: x${nl}${nl}`,
      "502",
    );
  }
  if (k < 70) {
    const interim = `HTTP/1.1 100 Continue${nl}${nl}`.repeat(17 + g.int(5));
    return text(
      "too many interim responses",
      interim + g.head(nl, ["Content-Length: 0"]) + nl,
      "502",
    );
  }
  if (k < 73) {
    const junk = new Uint8Array(1 + g.int(200));
    for (let i = 0; i < junk.length; i++) junk[i] = g.int(256);
    junk[0] = 0x80 + g.int(128);
    return { what: "binary junk", bytes: junk, expect: "502" };
  }
  if (k < 79) {
    const n = 10 + g.int(60_000);
    return text(
      `small body cut (${n})`,
      g.head(nl, [`Content-Length: ${n}`]) + nl + g.body(g.int(n)),
      "502",
    );
  }
  if (k < 83) {
    const n = 70_000 + g.int(100_000);
    return text(
      `large body cut (${n})`,
      g.head(nl, [`Content-Length: ${n}`]) + nl + "z".repeat(1 + g.int(65_000)),
      "truncated",
    );
  }
  if (k < 89) {
    const chunks = Array.from({ length: g.int(4) }, () => {
      const d = g.body(1 + g.int(300));
      return `${d.length.toString(16)}\r\n${d}\r\n`;
    }).join("");
    const tail = g.pick([
      "zz\r\nab\r\n",
      "3\r\nabcd",
      "5\r\nab",
      "-1\r\n",
      "3\r\nabc0\r\n\r\n",
      "",
    ]);
    return text(
      `chunked body broken by ${JSON.stringify(tail)}`,
      g.head(nl, ["Transfer-Encoding: chunked"]) + nl + chunks + tail,
      "502_or_truncated",
    );
  }
  // Valid: Content-Length, chunked, or until close.
  const body = g.body(g.int(3000));
  const kind = g.int(3);
  if (kind === 0) {
    return text(
      "valid, Content-Length",
      g.head(nl, [`Content-Length: ${body.length}`]) + nl + body,
      "intact",
      body,
    );
  }
  if (kind === 1) {
    const half = body.length >> 1;
    const chunk = (s: string) => s.length === 0 ? "" : `${s.length.toString(16)}\r\n${s}\r\n`;
    return text(
      "valid, chunked",
      g.head(nl, ["Transfer-Encoding: chunked"]) + nl + chunk(body.slice(0, half)) +
        chunk(body.slice(half)) +
        "0\r\n\r\n",
      "intact",
      body,
    );
  }
  return text("valid, until close", g.head(nl, ["Connection: close"]) + nl + body, "intact", body);
}

/** Answers `GET /f/N` with case N's bytes, written in up to three pieces, then closes. */
function fuzzMember(
  cases: FuzzCase[],
  r: () => number,
): { address: string; served: number; close(): Promise<void> } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const tasks = new Set<Promise<void>>();
  const open = new Set<Deno.Conn>();
  const state = {
    address: `127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    served: 0,
    async close() {
      listener.close();
      await loop;
      for (const c of open) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      await Promise.all([...tasks]);
    },
  };
  const serve = async (conn: Deno.Conn) => {
    let text = "";
    const buf = new Uint8Array(8192);
    while (!text.includes("\r\n\r\n")) {
      const n = await conn.read(buf);
      if (n === null) return;
      text += latin1(buf.subarray(0, n));
    }
    const c = cases[Number(/^GET \/f\/(\d+) /.exec(text)![1])];
    state.served++;
    const cuts = [r(), r()].map((x) => Math.floor(x * c.bytes.length)).sort((a, b) => a - b);
    let at = 0;
    for (const end of [...cuts, c.bytes.length]) {
      if (end > at) await conn.write(c.bytes.subarray(at, end));
      at = Math.max(at, end);
      await delay(0);
    }
  };
  const loop = (async () => {
    try {
      for await (const conn of listener) {
        open.add(conn);
        const t = serve(conn).catch(() => {}).finally(() => {
          open.delete(conn);
          tasks.delete(t);
          try {
            conn.close();
          } catch { /* closed */ }
        });
        tasks.add(t);
      }
    } catch { /* closed */ }
  })();
  return state;
}

Deno.test("end-to-end fuzz: 300 seeded malformed responses become 502 or a cut body; scalwsd stays up", async () => {
  // FUZZ_SEED=N replays another seed.
  const seed = Number(Deno.env.get("FUZZ_SEED") ?? 0x5ca1ab1e);
  const g = new FuzzGen(prng(seed));
  const cases = Array.from({ length: 300 }, () => fuzzCase(g));
  const member = fuzzMember(cases, prng(seed + 1));
  const s = await startScalwsd(`
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
  default_host: a.test
upstreams:
  p:
    members: [{address: "${member.address}"}]
    keepalive: 0
    retries: 0
    passive_health: {failures: 0}
tenants:
  - name: t
    applications:
      - name: a
        domains: [a.test]
        runtime: {type: proxy, upstream: {pool: p}, response_timeout: 3s}
`);
  const counts: Record<string, number> = {};
  try {
    let next = 0;
    const worker = async () => {
      const client = Deno.createHttpClient({});
      try {
        while (next < cases.length) {
          const i = next++;
          const c = cases[i];
          const label = `case ${i} (${c.what})`;
          let status = 0;
          let body = "";
          let broken = false;
          try {
            const res = await fetch(`${s.url}/f/${i}`, {
              client,
              signal: AbortSignal.timeout(5000),
            });
            status = res.status;
            try {
              body = await res.text();
            } catch {
              broken = true;
            }
          } catch (err) {
            assert.fail(`${label}: no response: ${err}`);
          }
          const seen = status === 502 && !broken && body === "Bad Gateway\n"
            ? "502"
            : status === 200 && broken
            ? "truncated"
            : "intact";
          counts[seen] = (counts[seen] ?? 0) + 1;
          if (c.expect === "intact") {
            assert.equal(seen, "intact", label);
            assert.equal(status, 200, label);
            assert.equal(body, c.body, label);
          } else if (c.expect === "502_or_truncated") {
            assert.ok(seen === "502" || seen === "truncated", `${label}: ${status} ${broken}`);
          } else {
            assert.equal(
              seen,
              c.expect,
              `${label}: ${status} ${JSON.stringify(body.slice(0, 80))}`,
            );
          }
        }
      } finally {
        client.close();
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    assert.equal(member.served, cases.length);
    assert.ok(
      counts["502"] > 150 && counts.truncated > 5 && counts.intact > 20,
      JSON.stringify(counts),
    );
    // Still up and nothing escaped as a handler error.
    const ok = await fetch(`${s.url}/f/${cases.findIndex((c) => c.expect === "intact")}`);
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
    // A body broken after its head reaches Deno.serve's onError as the client's stream error
    // (`request_failed` with the UpstreamError); anything else would be a bug escaping.
    const errors = s.logs.filter((l) => /"level":"error"/.test(l)).map((l) => JSON.parse(l));
    assert.ok(errors.length > 0);
    for (const e of errors) {
      assert.equal(e.event, "request_failed", JSON.stringify(e));
      assert.match(e.error, /^UpstreamError: /);
    }
  } finally {
    await s.close();
    await member.close();
  }
});

// ---------------------------------------------------------------------------------------------
// Admin side: refused PUT bodies.

const ADMIN_CONFIG = `
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
  admin: {socket: "{{dir}}/admin.sock"}
  default_host: a.test
upstreams:
  dyn:
    members_from: api
  fixed:
    members: [{address: "127.0.0.1:9"}]
tenants:
  - name: t
    applications:
      - name: a
        domains: [a.test]
        runtime: {type: proxy, upstream: {pool: dyn}}
`;

const MAX_ADMIN_BODY = 2 * 1024 * 1024;
const TOO_LARGE = `body is larger than ${MAX_ADMIN_BODY} bytes`;

/** Sends a PUT over the admin socket with a raw body; a stream is sent chunked. */
async function putRaw(
  s: Running,
  pool: string,
  body: string | Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array>,
): Promise<{ status: number; error: string }> {
  const res = await adminFetch(`${s.dir}/admin.sock`, `/v1/upstreams/${pool}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body,
  });
  const json = await res.json();
  return { status: res.status, error: json.error };
}

/** A stream of `total` bytes of JSON-ish padding in 64 KiB chunks, without a length. */
function chunkedBody(total: number): ReadableStream<Uint8Array> {
  let sent = 0;
  const piece = enc.encode(" ".repeat(65536));
  return new ReadableStream({
    pull(c) {
      if (sent >= total) return c.close();
      const n = Math.min(piece.length, total - sent);
      c.enqueue(piece.subarray(0, n));
      sent += n;
    },
  });
}

Deno.test("admin PUT refusals: each bad body gets the documented status and message, nothing changes", async () => {
  const m = new RecordingMember();
  const s = await startScalwsd(ADMIN_CONFIG);
  const sock = `${s.dir}/admin.sock`;
  const addr = m.address;
  try {
    assert.equal(
      (await putRaw(s, "dyn", JSON.stringify({ members: [{ address: addr }] }))).status,
      200,
    );
    const before = await (await adminFetch(sock, "/v1/upstreams")).json();
    const many = Array.from(
      { length: 10_001 },
      (_, i) => ({ address: `10.1.${i >> 8}.${i & 255}:80` }),
    );
    const cases: [string, string, number, string][] = [
      // Malformed JSON.
      ["truncated JSON", '{"members": [', 400, "body: invalid JSON"],
      ["trailing comma", `{"members": [{"address": "${addr}"},]}`, 400, "body: invalid JSON"],
      ["single quotes", "{'members': []}", 400, "body: invalid JSON"],
      ["empty body", "", 400, "body: invalid JSON"],
      ["two documents", '{"members": []}{"members": []}', 400, "body: invalid JSON"],
      ["not UTF-8", "\xff\xfe", 400, "body: invalid JSON"],
      // Wrong shapes and types.
      ["null", "null", 400, 'body: must be {"members": [...]}'],
      ["a list", `[{"address": "${addr}"}]`, 400, 'body: must be {"members": [...]}'],
      ["members a string", `{"members": "${addr}"}`, 400, 'body: must be {"members": [...]}'],
      ["members null", '{"members": null}', 400, 'body: must be {"members": [...]}'],
      ["an extra key", '{"members": [], "pool": "dyn"}', 400, 'body: unknown key "pool"'],
      [
        "an entry that is a string",
        `{"members": ["${addr}"]}`,
        400,
        "members[0]: must be a mapping {address, weight}",
      ],
      [
        "an entry that is null",
        '{"members": [null]}',
        400,
        "members[0]: must be a mapping {address, weight}",
      ],
      ["no address", '{"members": [{"weight": 2}]}', 400, "members[0].address: is required"],
      [
        "a numeric address",
        '{"members": [{"address": 8080}]}',
        400,
        "members[0].address: must be a string",
      ],
      [
        "a string weight",
        `{"members": [{"address": "${addr}", "weight": "2"}]}`,
        400,
        "members[0].weight: must be an integer",
      ],
      [
        "a fractional weight",
        `{"members": [{"address": "${addr}", "weight": 1.5}]}`,
        400,
        "members[0].weight: must be an integer",
      ],
      [
        "a null weight",
        `{"members": [{"address": "${addr}", "weight": null}]}`,
        400,
        "members[0].weight: must be an integer",
      ],
      [
        "an unknown entry key",
        `{"members": [{"address": "${addr}", "port": 80}]}`,
        400,
        'members[0]: unknown key "port"',
      ],
      [
        "a port out of range",
        '{"members": [{"address": "127.0.0.1:65536"}]}',
        400,
        'members[0].address: invalid address "127.0.0.1:65536": port must be between 1 and 65535',
      ],
      [
        "two errors at once",
        `{"members": [{"address": "${addr}", "weight": 0}, {"address": 1}]}`,
        400,
        "members[0].weight: must be between 1 and 1000\nmembers[1].address: must be a string",
      ],
      // 10,001 members.
      [
        "10,001 members",
        JSON.stringify({ members: many }),
        400,
        "members: at most 10000 members allowed",
      ],
      // Duplicates, also under different spellings of one address.
      [
        "a duplicate",
        JSON.stringify({ members: [{ address: addr }, { address: addr, weight: 2 }] }),
        400,
        `members[1].address: duplicate member "${addr}"`,
      ],
      [
        "a duplicate IPv6 spelling",
        '{"members": [{"address": "[::1]:8080"}, {"address": "[0:0:0::1]:8080"}]}',
        400,
        'members[1].address: duplicate member "[::1]:8080"',
      ],
      [
        "a duplicate host name in another case",
        '{"members": [{"address": "API.internal:80"}, {"address": "api.INTERNAL:80"}]}',
        400,
        'members[1].address: duplicate member "api.internal:80"',
      ],
      [
        "a unix: member beside another",
        `{"members": [{"address": "${addr}"}, {"address": "unix:/run/api.sock"}]}`,
        400,
        "members[1].address: a unix: member must be the only member of its pool",
      ],
      // Huge bodies, with a length.
      ["2 MiB + 1 with a length", " ".repeat(MAX_ADMIN_BODY + 1), 413, TOO_LARGE],
      // Pools that cannot take a PUT.
      ["an unknown pool", '{"members": []}', 404, 'no pool named "nope"'],
      [
        "a file pool",
        '{"members": []}',
        409,
        'pool "fixed" has members_from: file; change its members in the configuration',
      ],
    ];
    const refusals: string[] = [];
    for (const [what, body, status, error] of cases) {
      const pool = status === 404 ? "nope" : status === 409 ? "fixed" : "dyn";
      const r = await putRaw(s, pool, body.startsWith("\xff") ? bytesOf(body) : body);
      assert.deepEqual(r, { status, error }, what);
      refusals.push(`refused ${status}`);
    }
    // Huge bodies without a length (chunked): cut at 2 MiB.
    for (const total of [MAX_ADMIN_BODY + 1, 8 * MAX_ADMIN_BODY]) {
      assert.deepEqual(await putRaw(s, "dyn", chunkedBody(total)), {
        status: 413,
        error: TOO_LARGE,
      });
      refusals.push("refused 413");
    }
    assert.deepEqual(await (await adminFetch(sock, "/v1/upstreams")).json(), before);
    const audits = s.logs.map((l) => JSON.parse(l)).filter((l) => l.event === "admin_audit");
    assert.deepEqual(audits.slice(1).map((a) => a.result), refusals);

    // Exactly 2 MiB is accepted, with or without a length.
    const same = JSON.stringify({ members: [{ address: addr }] });
    const padded = same + " ".repeat(MAX_ADMIN_BODY - same.length);
    assert.equal((await putRaw(s, "dyn", padded)).status, 200);
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(enc.encode(padded));
        c.close();
      },
    });
    assert.equal((await putRaw(s, "dyn", stream)).status, 200);
    assert.deepEqual(await (await adminFetch(sock, "/v1/upstreams")).json(), before);
    assert.equal(await (await fetch(s.url + "/")).text(), "ok");
  } finally {
    await s.close();
    await m.close();
  }
});

// ---------------------------------------------------------------------------------------------
// Config side: broken files through `scalwsd check` (cases not in src/config/load_test.ts).

const MAIN = new URL("../main.ts", import.meta.url).pathname;

const LISTENER = 'server:\n  listeners: [{name: http, address: "127.0.0.1:8080"}]\n';
const POOL = (extra = "", address = "127.0.0.1:80") =>
  `upstreams:\n  api: {members: [{address: "${address}"}]${extra}}\n`;
const APP = (runtime = "{type: proxy, upstream: {pool: api}}", extra = "") =>
  "tenants:\n  - name: t\n    applications:\n" +
  `      - {name: a, domains: [a.test], runtime: ${runtime}${extra}}\n`;
const A = "tenants[0].applications[0]";

/** Each file and the exact, complete list of errors `check` prints for it (after `FILE: `). */
const BROKEN_CONFIGS: { name: string; yaml: string; errors: string[] }[] = [
  {
    name: "a tab in the indentation",
    yaml: LISTENER + "upstreams:\n\tapi: {}\n",
    errors: ["line 4, column 1: Tabs are not allowed as indentation"],
  },
  {
    name: "member port 0",
    yaml: LISTENER + POOL("", "127.0.0.1:0") + APP(),
    errors: [
      'upstreams.api.members[0].address: invalid address "127.0.0.1:0": port must be between 1 and 65535',
    ],
  },
  {
    name: "IPv6 member without brackets",
    yaml: LISTENER + POOL("", "::1:8080") + APP(),
    errors: [
      'upstreams.api.members[0].address: invalid address "::1:8080": an IPv6 address must be in brackets',
    ],
  },
  {
    name: "relative unix member",
    yaml: LISTENER + POOL("", "unix:run/api.sock") + APP(),
    errors: [
      'upstreams.api.members[0].address: invalid address "unix:run/api.sock": the socket path must be absolute',
    ],
  },
  {
    name: "weight as a string",
    yaml: LISTENER + 'upstreams:\n  api: {members: [{address: "127.0.0.1:80", weight: "2"}]}\n' +
      APP(),
    errors: ["upstreams.api.members[0].weight: must be an integer"],
  },
  {
    name: "members as a mapping",
    yaml: LISTENER + 'upstreams:\n  api: {members: {a: "127.0.0.1:80"}}\n' + APP(),
    errors: ["upstreams.api.members: must be a list"],
  },
  {
    name: "hash by an unknown kind",
    yaml: LISTENER + POOL(", balance: hash, hash: {by: query}") + APP(),
    errors: [
      'upstreams.api.hash.by: invalid value "query"; must be one of cookie, header, client_ip',
    ],
  },
  {
    name: "a unit used twice in a duration",
    yaml: LISTENER + POOL(", passive_health: {cooldown: 1s1s}") + APP(),
    errors: [
      'upstreams.api.passive_health.cooldown: invalid duration "1s1s": units must go from largest to smallest, each once',
    ],
  },
  {
    name: "a fractional size",
    yaml: LISTENER + "  max_body: 1.5MiB\n" + POOL() + APP(),
    errors: [
      'server.max_body: invalid size "1.5MiB": use bytes or a unit B, KB, MB, GB, TB, KiB, MiB, GiB, TiB',
    ],
  },
  {
    name: "trusted_proxies not a list",
    yaml: LISTENER + "  trusted_proxies: 10.0.0.0/8\n" + POOL() + APP(),
    errors: ["server.trusted_proxies: must be a list"],
  },
  {
    name: "a listener name in capitals",
    yaml: 'server:\n  listeners: [{name: HTTP, address: "127.0.0.1:8080"}]\n' + POOL() + APP(),
    errors: [
      'server.listeners[0].name: invalid name "HTTP": use 1 to 63 characters a-z, 0-9, "_" and "-", starting with a letter or digit',
    ],
  },
  {
    name: "a domain with a port",
    yaml: LISTENER + POOL() + APP().replace("[a.test]", '["a.test:8080"]'),
    errors: [`${A}.domains[0]: invalid domain "a.test:8080"`],
  },
  {
    name: "a route path with a query",
    yaml: LISTENER + POOL() +
      APP(undefined, ', routes: [{path: "/a?b", runtime: {type: respond}}]'),
    errors: [`${A}.routes[0].path: invalid path "/a?b": no spaces, "?" or "#" allowed`],
  },
  {
    name: "a respond status as a string",
    yaml: LISTENER + POOL() + APP('{type: respond, status: "200"}'),
    errors: [`${A}.runtime.status: must be an integer`],
  },
  {
    name: "a relative unix upstream",
    yaml: LISTENER + POOL() + APP('{type: proxy, upstream: "unix:run/app.sock"}'),
    errors: [
      `${A}.runtime.upstream: invalid upstream "unix:run/app.sock": the socket path must be absolute`,
    ],
  },
];

Deno.test("scalwsd check prints the exact path and message for each broken configuration", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-check-" });
  try {
    let next = 0;
    const failures: string[] = [];
    const worker = async () => {
      while (next < BROKEN_CONFIGS.length) {
        const c = BROKEN_CONFIGS[next++];
        const file = `${dir}/${c.name.replaceAll(/\W+/g, "_")}.yaml`;
        await Deno.writeTextFile(file, c.yaml);
        const out = await new Deno.Command(Deno.execPath(), {
          args: ["run", "--allow-all", MAIN, "check", "--config", file],
          stdout: "piped",
          stderr: "piped",
        }).output();
        const stderr = new TextDecoder().decode(out.stderr).trimEnd().split("\n");
        const expected = c.errors.map((e) => `${file}: ${e}`);
        try {
          assert.equal(out.code, 1, c.name);
          assert.equal(out.stdout.length, 0, c.name);
          assert.deepEqual(stderr, expected, c.name);
        } catch (err) {
          failures.push(String(err));
        }
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    assert.deepEqual(failures, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
