import assert from "node:assert/strict";
import { bytes } from "./_bytes.ts";
import { findHeadEnd } from "../wire/mod.ts";
import { HeadError, MAX_FIELD_LINES, parseRequestHead, RequestHead } from "./parse_request_head.ts";

/** Parses the complete head at the start of `s`; the head or the refusal's message. */
function parse(s: string): RequestHead | string {
  const buf = bytes(s);
  const end = findHeadEnd(buf, 0, buf.length);
  assert.ok(end > 0, `no complete head in ${JSON.stringify(s)}`);
  try {
    return parseRequestHead(buf, 0, end, new RequestHead());
  } catch (err) {
    if (!(err instanceof HeadError)) throw err;
    return err.message;
  }
}

function ok(s: string): RequestHead {
  const h = parse(s);
  assert.ok(h instanceof RequestHead, `refused ${JSON.stringify(s)}: ${h}`);
  return h;
}

function refused(s: string, why?: string): void {
  const h = parse(s);
  assert.equal(typeof h, "string", `accepted ${JSON.stringify(s)}`);
  if (why !== undefined) assert.equal(h, why, JSON.stringify(s));
}

const G = "GET / HTTP/1.1\r\nHost: a.test\r\n";
const P = "POST /up HTTP/1.1\r\nHost: a.test\r\n";

Deno.test("parseRequestHead reads the request line, fields in order and the framing", () => {
  const input = "POST /a/b?c=d HTTP/1.1\r\nHost: a.test\r\nX-Trace:  v 1 \r\n" +
    "Content-Length: 3\r\nX-Trace: v2\r\n\r\nabc";
  const h = ok(input);
  assert.equal(h.method, "POST");
  assert.equal(h.target, "/a/b?c=d");
  assert.equal(h.minor, 1);
  assert.deepEqual(h.fields, [
    "host",
    "a.test",
    "x-trace",
    "v 1",
    "content-length",
    "3",
    "x-trace",
    "v2",
  ]);
  assert.equal(h.get("x-trace"), "v 1, v2");
  assert.equal(h.get("nope"), null);
  assert.equal(h.host, "a.test");
  assert.equal(h.contentLength, 3);
  assert.equal(h.chunked, false);
  assert.equal(h.keepAlive, true);
  assert.equal(h.fieldCount, 4);
  assert.equal(h.fieldBytes, 14 + 14 + 19 + 13);
  assert.equal(h.length, input.length - 3);
  const seen: string[] = [];
  h.forEach((v, k) => seen.push(`${k}=${v}`));
  assert.deepEqual(seen, ["host=a.test", "x-trace=v 1", "content-length=3", "x-trace=v2"]);
});

Deno.test("parseRequestHead: keep-alive by version and Connection", () => {
  assert.equal(ok(G + "\r\n").keepAlive, true);
  assert.equal(ok(G + "Connection: close\r\n\r\n").keepAlive, false);
  assert.equal(ok(G + "Connection: keep-alive, CLOSE\r\n\r\n").keepAlive, false);
  assert.equal(ok("GET / HTTP/1.0\r\n\r\n").keepAlive, false);
  assert.equal(ok("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keepAlive, true);
  assert.equal(ok("GET / HTTP/1.0\r\n\r\n").minor, 0);
  // A later 1.x is served as 1.1.
  assert.equal(ok("GET / HTTP/1.7\r\nHost: a\r\n\r\n").minor, 1);
});

Deno.test("parseRequestHead: Expect, Upgrade, absolute and asterisk targets", () => {
  assert.equal(ok(P + "Expect: 100-Continue\r\nContent-Length: 1\r\n\r\n").expectContinue, true);
  assert.equal(ok("POST / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n").expectContinue, false);
  assert.equal(ok(G + "Expect: something\r\n\r\n").expectContinue, false);
  const ws = ok(G + "Upgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n\r\n");
  assert.equal(ws.upgrade, "websocket");
  assert.equal(ok(G + "Upgrade: websocket\r\n\r\n").upgrade, "", "no Connection: upgrade");
  const abs = ok("GET http://b.test:8080/x?y HTTP/1.1\r\nHost: a.test\r\n\r\n");
  assert.deepEqual([abs.target, abs.targetAuthority], ["/x?y", "b.test:8080"]);
  const bare = ok("GET HTTPS://b.test?q HTTP/1.1\r\nHost: b.test\r\n\r\n");
  assert.deepEqual([bare.target, bare.targetAuthority], ["/?q", "b.test"]);
  assert.equal(ok("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n").target, "*");
  refused("GET * HTTP/1.1\r\nHost: a\r\n\r\n");
  refused("CONNECT a.test:443 HTTP/1.1\r\nHost: a.test\r\n\r\n");
  refused("GET http://u@b.test/ HTTP/1.1\r\nHost: a\r\n\r\n");
  refused("GET http:///x HTTP/1.1\r\nHost: a\r\n\r\n");
});

Deno.test("parseRequestHead: bare LF ends lines (RFC 9112 2.2); bare CR never does", () => {
  const h = ok("GET /x HTTP/1.1\nHost: a.test\nX-A: v\n\n");
  assert.deepEqual(h.fields, ["host", "a.test", "x-a", "v"]);
  assert.equal(ok("POST / HTTP/1.1\nHost: a\nContent-Length: 3\n\nabc").contentLength, 3);
  refused(G + "X-A: a\rb\r\n\r\n", "bare CR in a field value");
  refused("GET / HTTP/1.1\rHost: a.test\r\n\r\n", "bare CR in the request line");
  refused(G + "X-A: v\r\r\n\r\n");
});

Deno.test("parseRequestHead refuses every smuggling and framing trick", () => {
  // Each case: the bytes and what it tries.
  const cases: [string, string][] = [
    [P + "Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n", "CL then TE"],
    [P + "Transfer-Encoding: chunked\r\nContent-Length: 6\r\n\r\n", "TE then CL"],
    [P + "Content-Length: 3\r\nContent-Length: 5\r\n\r\n", "two lengths"],
    [P + "Content-Length: 3, 5\r\n\r\n", "a list of two lengths"],
    [P + "Content-Length: 3,\r\n\r\n", "a list with an empty member"],
    [P + "Content-Length: +3\r\n\r\n", "signed"],
    [P + "Content-Length: -1\r\n\r\n", "negative"],
    [P + "Content-Length: 0x3\r\n\r\n", "hex"],
    [P + "Content-Length: 3a\r\n\r\n", "trailing junk"],
    [P + "Content-Length: \r\n\r\n", "empty"],
    [P + "Content-Length: 18446744073709551616\r\n\r\n", "2^64"],
    [P + "Content-Length: 18446744073709551619\r\n\r\n", "2^64 + 3"],
    [P + "Content-Length: 1000000000000000\r\n\r\n", "16 digits"],
    [P + "Transfer-Encoding: xchunked\r\n\r\n", "xchunked"],
    [P + "Transfer-Encoding: chunked, identity\r\n\r\n", "chunked not last"],
    [P + "Transfer-Encoding: gzip, chunked\r\n\r\n", "a coding before chunked"],
    [P + "Transfer-Encoding: gzip\r\n\r\n", "gzip"],
    [P + "Transfer-Encoding: identity\r\n\r\n", "identity"],
    [P + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", "two TE"],
    [P + "Transfer-Encoding:\r\n\r\n", "empty TE"],
    ["POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "TE in HTTP/1.0"],
    [G + "X-A: a\r\n b\r\n\r\n", "obs-fold SP"],
    [G + "X-A: a\r\n\tb\r\n\r\n", "obs-fold HTAB"],
    [P + "Content-Length: 3\r\nX-A: a\r\n Transfer-Encoding: chunked\r\n\r\n", "folded TE"],
    ["GET / HTTP/1.1\r\n Host: a\r\n\r\n", "fold on the first line"],
    [G + "X A: v\r\n\r\n", "space in a name"],
    [P + "Content-Length : 3\r\n\r\n", "space before the colon"],
    [P + "Content-Length\t: 3\r\n\r\n", "tab before the colon"],
    [G + "[x]: v\r\n\r\n", "brackets"],
    [G + "X\x00A: v\r\n\r\n", "NUL in a name"],
    [G + "X-A: a\x00b\r\n\r\n", "NUL in a value"],
    [G + "X-A: a\x01b\r\n\r\n", "SOH in a value"],
    [G + "X-A: a\x7fb\r\n\r\n", "DEL in a value"],
    [G + "X-A: a\x1bb\r\n\r\n", "ESC in a value"],
    [G + ": v\r\n\r\n", "empty name"],
    [G + "X-A v\r\n\r\n", "no colon"],
    [G + "Host: b.test\r\n\r\n", "two Host"],
    [
      G +
      "Upgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n",
      "h2c",
    ],
    [G + "Upgrade: websocket, H2C/1\r\nConnection: upgrade\r\n\r\n", "h2c in a list"],
    [G + "Upgrade: h2c\r\n\r\n", "h2c without Connection"],
    ["PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "the h2 preface"],
    ["GET / HTTP/2.0\r\nHost: a\r\n\r\n", "HTTP/2.0"],
    ["GET / HTTP/1\r\nHost: a\r\n\r\n", "no minor"],
    ["GET / http/1.1\r\nHost: a\r\n\r\n", "lower-case protocol"],
    ["GET / HTTP/1.1 \r\nHost: a\r\n\r\n", "space after the version"],
    ["GET  / HTTP/1.1\r\nHost: a\r\n\r\n", "two spaces"],
    ["GET /\x00 HTTP/1.1\r\nHost: a\r\n\r\n", "NUL in the target"],
    ["GET /\x7f HTTP/1.1\r\nHost: a\r\n\r\n", "DEL in the target"],
    ["GET /a\tb HTTP/1.1\r\nHost: a\r\n\r\n", "tab in the target"],
    ["G(T / HTTP/1.1\r\nHost: a\r\n\r\n", "a method that is no token"],
    [" GET / HTTP/1.1\r\nHost: a\r\n\r\n", "leading space"],
    ["GET\r\n\r\n", "no target"],
    ["GET /\r\n\r\n", "HTTP/0.9"],
    ["GET x HTTP/1.1\r\nHost: a\r\n\r\n", "a relative target"],
  ];
  for (const [s] of cases) refused(s);
});

Deno.test("parseRequestHead accepts what is safe to accept", () => {
  assert.equal(ok(P + "Content-Length: 3\r\nContent-Length: 3\r\n\r\n").contentLength, 3);
  assert.equal(ok(P + "Content-Length: 3 , 3\r\n\r\n").contentLength, 3);
  assert.equal(ok(P + "Content-Length: 007\r\n\r\n").contentLength, 7);
  assert.equal(ok(P + "Content-Length: 999999999999999\r\n\r\n").contentLength, 999999999999999);
  assert.equal(ok(P + "Transfer-Encoding: Chunked\r\n\r\n").chunked, true);
  assert.equal(ok(P + "Transfer-Encoding:  chunked \r\n\r\n").chunked, true);
  assert.equal(ok(G + "X-Empty:\r\n\r\n").get("x-empty"), "");
  // obs-text in values stands for itself (one char per byte); targets are ASCII only.
  const h = ok("GET /caf%C3%A9 HTTP/1.1\r\nHost: a\r\nX-L: \xe9t\xe9\r\n\r\n");
  assert.equal(h.target, "/caf%C3%A9");
  assert.equal(h.get("x-l"), "\xe9t\xe9");
  refused("GET /caf\xe9 HTTP/1.1\r\nHost: a\r\n\r\n");
  assert.equal(ok("DELETE / HTTP/1.1\r\nHost: a\r\n\r\n").method, "DELETE");
  assert.equal(ok("PROPFIND / HTTP/1.1\r\nHost: a\r\n\r\n").method, "PROPFIND");
  assert.equal(ok("get / HTTP/1.1\r\nHost: a\r\n\r\n").method, "get", "methods are case-sensitive");
  assert.equal(ok("GET / HTTP/1.1\r\n\r\n").host, null);
});

Deno.test("parseRequestHead: at most MAX_FIELD_LINES field lines", () => {
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `X-${i}: v\r\n`).join("");
  assert.equal(ok("GET / HTTP/1.1\r\n" + lines(MAX_FIELD_LINES) + "\r\n").fieldCount, 128);
  refused("GET / HTTP/1.1\r\n" + lines(MAX_FIELD_LINES + 1) + "\r\n", "too many field lines");
});

Deno.test("findHeadEnd finds the blank line in pieces and says where to resume", () => {
  const s = bytes("GET / HTTP/1.1\r\nHost: a\r\n\r\nBODY");
  assert.equal(findHeadEnd(s, 0, s.length), 27);
  for (let cut = 0; cut < 27; cut++) assert.ok(findHeadEnd(s, 0, cut) < 0, `cut ${cut}`);
  const lf = bytes("GET / HTTP/1.1\nHost: a\n\nX");
  assert.equal(findHeadEnd(lf, 0, lf.length), 24);
});

Deno.test("parseRequestHead drops a fragment from the target", () => {
  const t = (target: string) => ok(`GET ${target} HTTP/1.1\r\nHost: a.test\r\n\r\n`).target;
  assert.equal(t("/.git#x"), "/.git");
  assert.equal(t("/a?b=c#d?e"), "/a?b=c");
  assert.equal(t("/#"), "/");
  assert.equal(t("http://a.test/p#f"), "/p");
  assert.equal(t("http://a.test#f"), "/");
  refused("GET #f HTTP/1.1\r\nHost: a.test\r\n\r\n");
});
