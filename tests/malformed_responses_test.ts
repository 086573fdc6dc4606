/**
 * Malformed member responses end to end: a seeded fuzz of bad status lines, fields, lengths and
 * bodies becomes 502 or a cut body, and scalwsd stays up. Loopback only, bounded.
 */
import assert from "node:assert/strict";
import { bytesOf, latin1 } from "./_support/bytes.ts";
import {
  adminFetch,
  app,
  members,
  proxy,
  type RawServer,
  rawServer,
  readHead,
  scalwsYaml,
  sleep,
  startScalwsd,
} from "./_support/mod.ts";
import { Gen, TCHARS } from "../src/base/_gen.ts";
import { seeded as prng } from "../src/base/random.ts";
import { closeQuietly } from "./_support/raw_exchange.ts";

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

/** The shared generator, plus the shapes of a member's response fields. */
class FuzzGen extends Gen {
  override token(): string {
    let t = "x-";
    for (let i = this.int(10); i >= 0; i--) t += TCHARS[this.int(TCHARS.length)];
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
function fuzzMember(cases: FuzzCase[], r: () => number): RawServer & { served: number } {
  const serve = async (conn: Deno.Conn) => {
    let text = "";
    const buf = new Uint8Array(8192);
    while (!text.includes("\r\n\r\n")) {
      const n = await conn.read(buf);
      if (n === null) return;
      text += latin1(buf.subarray(0, n));
    }
    const c = cases[Number(/^GET \/f\/(\d+) /.exec(text)![1])];
    member.served++;
    const cuts = [r(), r()].map((x) => Math.floor(x * c.bytes.length)).sort((a, b) => a - b);
    let at = 0;
    for (const end of [...cuts, c.bytes.length]) {
      if (end > at) await conn.write(c.bytes.subarray(at, end));
      at = Math.max(at, end);
      await sleep(0);
    }
  };
  const member = Object.assign(
    rawServer((conn) => serve(conn).finally(() => closeQuietly(conn))),
    { served: 0 },
  );
  return member;
}

Deno.test("end-to-end fuzz: 300 seeded malformed responses become 502 or a cut body; scalwsd stays up", async () => {
  // FUZZ_SEED=N replays another seed.
  const seed = Number(Deno.env.get("FUZZ_SEED") ?? 0x5ca1ab1e);
  const g = new FuzzGen(seed);
  const cases = Array.from({ length: 300 }, () => fuzzCase(g));
  await using member = fuzzMember(cases, prng(seed + 1));
  await using s = await startScalwsd(scalwsYaml({
    server: { admin: undefined, default_host: "a.test" },
    upstreams: {
      p: { members: members(member), keepalive: 0, retries: 0, passive_health: { failures: 0 } },
    },
    apps: [app(proxy("p", { response_timeout: "3s" }))],
  }));
  const counts: Record<string, number> = {};
  let next = 0;
  const worker = async () => {
    using client = Deno.createHttpClient({});
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
});

// docs/pools.md: a body that breaks after the member's head is never retried, even when none of
// it reached the client (a Content-Length answer of at most 64 KiB is read whole first): the
// client gets 502, the other member is not asked, and the break is logged as a body failure.
Deno.test("a small body broken after its head is 502, not retried on the other member", async () => {
  let asked = 0;
  await using broken = rawServer(async (c) => {
    await readHead(c);
    await c.write(bytesOf("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nabc"));
    closeQuietly(c);
  });
  await using other = rawServer(async (c) => {
    await readHead(c);
    asked++;
    await c.write(bytesOf("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"));
    closeQuietly(c);
  });
  await using s = await startScalwsd(scalwsYaml({
    server: { default_host: "a.test" },
    upstreams: {
      p: {
        // Each key goes to one member first: those of the broken member show what happens.
        members: members(`127.0.0.1:${broken.port}`, `127.0.0.1:${other.port}`),
        balance: "hash",
        hash: { by: "header", name: "x-key" },
        retries: 1,
        passive_health: { failures: 0 },
      },
    },
    apps: [app(proxy("p"))],
  }));
  const statuses = new Set<number>();
  for (let k = 0; k < 16; k++) {
    const before = asked;
    const res = await fetch(s.url + "/", { headers: { "x-key": `k${k}` } });
    await res.body?.cancel();
    statuses.add(res.status);
    if (res.status === 502) assert.equal(asked, before, `key k${k}: the other member was asked`);
    else assert.equal(res.status, 200);
  }
  assert.deepEqual([...statuses].sort(), [200, 502]);
  const text = await (await adminFetch(s.adminSocket, "/metrics")).text();
  assert.match(text, /^scalws_upstream_pool_retries_total\{pool="p"\} 0$/m);
  assert.ok(
    s.logs.some((l) => l.includes('"proxy_failed"') && l.includes('"phase":"body"')),
    "logged as a body failure",
  );
});
