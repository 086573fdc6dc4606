import assert from "node:assert/strict";
import { findHeadEnd, latin1, parseContentLength } from "../wire/mod.ts";
import { MAX_HEAD, parseResponseHead, type ResponseHead } from "./parse_response_head.ts";
import { UpstreamError } from "./upstream_error.ts";
import { bytesOf as bytes } from "../../tests/_support/bytes.ts";

function parse(s: string): ResponseHead {
  const buf = bytes(s);
  const end = findHeadEnd(buf, 0, buf.length);
  assert.ok(end >= 0, "head incomplete");
  return parseResponseHead(buf, 0, end);
}

function assertMalformed(s: string, message: RegExp): void {
  assert.throws(() => parse(s), (err: unknown) => {
    assert.ok(err instanceof UpstreamError);
    assert.equal(err.kind, "malformed");
    assert.equal(err.phase, "head");
    assert.match(err.message, message);
    return true;
  });
}

Deno.test("findHeadEnd finds CRLFCRLF and LFLF and reports where to resume", () => {
  const a = bytes("HTTP/1.1 200 OK\r\nA: b\r\n\r\nbody");
  assert.equal(findHeadEnd(a, 0, a.length), a.length - 4);
  const b = bytes("HTTP/1.1 200 OK\nA: b\n\nbody");
  assert.equal(findHeadEnd(b, 0, b.length), b.length - 4);
  const c = bytes("HTTP/1.1 200 OK\r\nA: b\r\n\r");
  const r = findHeadEnd(c, 0, c.length);
  assert.ok(r < 0);
  assert.equal(~r, c.length - 2); // the last LF, to look at what follows it again
  const d = bytes("HTTP/1.1 200 OK\r\nA: b\r\n\r\n");
  assert.equal(findHeadEnd(d, ~r, d.length), d.length);
  // Bytes past `end` are ignored.
  assert.ok(findHeadEnd(d, 0, d.length - 1) < 0);
  // Nothing to scan yet (an empty read buffer holding an earlier answer): resume where it is.
  assert.equal(findHeadEnd(d, 0, 0), ~0);
  assert.equal(findHeadEnd(d, 5, 5), ~5);
});

Deno.test("parseResponseHead reads status, reason and headers", () => {
  const h = parse(
    "HTTP/1.1 201 Created Here\r\nContent-Type: text/plain\r\nX-Empty:\r\n" +
      "Set-Cookie: a=1\r\nset-cookie: b=2\r\nContent-Length: 3\r\n\r\n",
  );
  assert.equal(h.status, 201);
  assert.equal(h.statusText, "Created Here");
  assert.deepEqual(h.headers, [
    ["content-type", "text/plain"],
    ["x-empty", ""],
    ["set-cookie", "a=1"],
    ["set-cookie", "b=2"],
    ["content-length", "3"],
  ]);
  assert.equal(h.contentLength, 3);
  assert.equal(h.chunked, false);
  assert.equal(h.keepAlive, true);
});

Deno.test("parseResponseHead accepts a status line without reason and trims values", () => {
  const h = parse("HTTP/1.1 204\r\nX-A: \t v w \t\r\n\r\n");
  assert.equal(h.status, 204);
  assert.equal(h.statusText, "");
  assert.deepEqual(h.headers, [["x-a", "v w"]]);
  assert.equal(parse("HTTP/1.1 200 \r\n\r\n").statusText, "");
});

Deno.test("parseResponseHead decodes obs-text bytes as latin1", () => {
  const h = parse("HTTP/1.1 200 \xe9t\xe9\r\nX-Name: caf\xe9 \x80\r\n\r\n");
  assert.equal(h.statusText, "\xe9t\xe9");
  assert.deepEqual(h.headers, [["x-name", "caf\xe9 \x80"]]);
  assert.equal(latin1(bytes("\x80\x9f\xff"), 0, 3), "\x80\x9f\xff");
});

Deno.test("parseResponseHead removes hop-by-hop and Connection-named headers", () => {
  const h = parse(
    "HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Drop\r\nKeep-Alive: timeout=5\r\n" +
      "Proxy-Connection: x\r\nTE: trailers\r\nTrailer: X-T\r\nUpgrade: h2c\r\n" +
      "Transfer-Encoding: chunked\r\nX-Drop: 1\r\nX-Keep: 2\r\n\r\n",
  );
  assert.deepEqual(h.headers, [["x-keep", "2"]]);
  assert.equal(h.chunked, true);
  assert.equal(h.keepAlive, true);
});

Deno.test("parseResponseHead keeps every header of a 101", () => {
  const h = parse(
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
      "Sec-WebSocket-Accept: x\r\n\r\n",
  );
  assert.deepEqual(h.headers, [
    ["upgrade", "websocket"],
    ["connection", "Upgrade"],
    ["sec-websocket-accept", "x"],
  ]);
});

Deno.test("parseResponseHead decides keep-alive from version and Connection", () => {
  assert.equal(parse("HTTP/1.1 200 OK\r\n\r\n").keepAlive, true);
  assert.equal(parse("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n").keepAlive, false);
  assert.equal(parse("HTTP/1.0 200 OK\r\n\r\n").keepAlive, false);
  assert.equal(parse("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\n\r\n").keepAlive, true);
  const te10 = parse(
    "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n",
  );
  assert.equal(te10.chunked, true);
  assert.equal(te10.keepAlive, false);
});

Deno.test("parseResponseHead accepts repeated equal Content-Length values", () => {
  assert.equal(parse("HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n").contentLength, 5);
  assert.equal(
    parse("HTTP/1.1 200 OK\r\nContent-Length: 7\r\nContent-Length: 7\r\n\r\n").contentLength,
    7,
  );
  assert.equal(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n").chunked, true);
});

Deno.test("parseResponseHead refuses malformed heads", () => {
  const cases: [string, RegExp][] = [
    ["HTTP/2.0 200 OK\r\n\r\n", /status line/],
    ["HTTP/1.2 200 OK\r\n\r\n", /status line/],
    ["http/1.1 200 OK\r\n\r\n", /status line/],
    ["HTTP/1.1  200 OK\r\n\r\n", /status code/],
    ["HTTP/1.1 20 OK\r\n\r\n", /status code|status line/],
    ["HTTP/1.1 099 OK\r\n\r\n", /status code/],
    ["HTTP/1.1 2000 OK\r\n\r\n", /status line/],
    ["HTTP/1.1 2x0 OK\r\n\r\n", /status code/],
    ["HTTP/1.1 200 O\x01K\r\n\r\n", /reason phrase/],
    ["\r\nHTTP/1.1 200 OK\r\n\r\n", /status line/],
    ["HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", /header line/],
    ["HTTP/1.1 200 OK\r\nName : x\r\n\r\n", /header line/],
    ["HTTP/1.1 200 OK\r\n: x\r\n\r\n", /header line/],
    ["HTTP/1.1 200 OK\r\nNoColon\r\n\r\n", /header line/],
    ["HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n", /folding/],
    ["HTTP/1.1 200 OK\r\nA: b\rc\r\n\r\n", /header value/],
    ["HTTP/1.1 200 OK\r\nA: b\x00c\r\n\r\n", /header value/],
    ["HTTP/1.1 200 OK\r\nA: b\x7f\r\n\r\n", /header value/],
    ["HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", /Content-Length/],
    ["HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n", /Content-Length/],
    ["HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", /Content-Length/],
    ["HTTP/1.1 200 OK\r\nContent-Length: 1e3\r\n\r\n", /Content-Length/],
    ["HTTP/1.1 200 OK\r\nContent-Length: 1234567890123456\r\n\r\n", /Content-Length/],
    ["HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n", /Content-Length/],
    [
      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
      /both Content-Length and Transfer-Encoding/,
    ],
    ["HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", /Transfer-Encoding/],
    ["HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", /Transfer-Encoding/],
    ["HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", /Transfer-Encoding/],
    [
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
      /Transfer-Encoding/,
    ],
  ];
  for (const [head, message] of cases) assertMalformed(head, message);
});

Deno.test("parseResponseHead refuses more than 100 header lines and heads over 64 KiB", () => {
  assert.equal(parse("HTTP/1.1 200 OK\r\n" + "A: b\r\n".repeat(100) + "\r\n").headers.length, 100);
  assertMalformed("HTTP/1.1 200 OK\r\n" + "A: b\r\n".repeat(101) + "\r\n", /more than 100/);
  const long = "HTTP/1.1 200 OK\r\nA: " + "x".repeat(MAX_HEAD) + "\r\n\r\n";
  assertMalformed(long, /over 64 KiB/);
});

Deno.test("parseContentLength reads one value or a list of equal ones", () => {
  assert.equal(parseContentLength("0"), 0);
  assert.equal(parseContentLength("123"), 123);
  assert.equal(parseContentLength("12 , 12,12"), 12);
  assert.equal(parseContentLength("999999999999999"), 999999999999999);
  for (const bad of ["", " ", ",", "1,", ",1", "1 2", "+1", "0x10", "1,2", "1.0"]) {
    assert.equal(parseContentLength(bad), -1, bad);
  }
});

Deno.test("parseResponseHead refuses a status outside 100-599 (the client gets 502)", () => {
  for (const s of ["999", "600", "099"]) {
    assertMalformed(`HTTP/1.1 ${s} Odd\r\ncontent-length: 0\r\n\r\n`, /invalid status code/);
  }
  assert.equal(parse("HTTP/1.1 599 Edge\r\n\r\n").status, 599);
  assert.equal(parse("HTTP/1.1 100 Continue\r\n\r\n").status, 100);
});

Deno.test("parseResponseHead keeps the member's first Date apart from the headers", () => {
  const h = parse(
    "HTTP/1.1 200 OK\r\nDate: Tue, 01 Dec 2026 10:00:00 GMT\r\nDate: Wed, 02 Dec 2026 10:00:00 GMT\r\n" +
      "Server: x\r\nContent-Length: 0\r\n\r\n",
  );
  assert.equal(h.date, "Tue, 01 Dec 2026 10:00:00 GMT");
  assert.deepEqual(h.headers.map((p) => p[0]), ["content-length"]);
  assert.equal(parse("HTTP/1.1 204 No Content\r\n\r\n").date, null);
});
