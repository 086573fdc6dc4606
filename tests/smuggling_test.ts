/**
 * Smuggling attempts from clients: each is refused, or reaches a member as one request that a
 * strict reader cannot read otherwise. Loopback only, bounded.
 */
import assert from "node:assert/strict";
import { bytesOf, latin1 } from "./_support/bytes.ts";
import { app, members, proxy, scalwsYaml, startScalwsd, waitUntil } from "./_support/mod.ts";
import { exchange, responses } from "./_support/raw_exchange.ts";
import { RecordingMember, strictRequest } from "./_support/recording_member.ts";

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
    // RFC 9112 7.1.1: an extension is ";" name ["=" value]; anything else is refused.
    name: "a chunk extension that is not one (3;a b)",
    bytes: (t) => post(t) + "Transfer-Encoding: chunked\r\n\r\n3;a b\r\nabc\r\n0\r\n\r\n",
    expect: CUT,
  },
  {
    name: "text after a chunk size without ';' (3 xyz)",
    bytes: (t) => post(t) + "Transfer-Encoding: chunked\r\n\r\n3 xyz\r\nabc\r\n0\r\n\r\n",
    expect: CUT,
  },
  {
    name: "an unterminated quoted chunk extension",
    bytes: (t) => post(t) + 'Transfer-Encoding: chunked\r\n\r\n3;a="b\r\nabc\r\n0\r\n\r\n',
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

/** Pool p of `member` twice (by IP and by name); route /single to `member` alone. */
function config(member: string): string {
  return scalwsYaml({
    server: { admin: undefined },
    upstreams: {
      p: {
        members: members(member, member.replace("127.0.0.1", "localhost")),
        keepalive: 0,
        retries: 1,
        passive_health: { failures: 0 },
      },
    },
    apps: [app(proxy("p", { response_timeout: "500ms" }), {
      routes: [{
        path: "/single",
        runtime: {
          type: "proxy",
          upstream: `http://${member}`,
          client: { keepalive: 0 },
          response_timeout: "500ms",
        },
      }],
    })],
  });
}

Deno.test("smuggling attempts are refused, or reach a member as one request it cannot read otherwise", async () => {
  await using member = new RecordingMember();
  await using s = await startScalwsd(config(member.address));
  const port = Number(new URL(s.url).port);
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
  await waitUntil(() => member.conns.every((c) => c.closed), {
    what: "member connections to close",
  });
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
});
