import assert from "node:assert/strict";
import {
  buildRequestHead,
  FRAMING_CHUNKED,
  FRAMING_NONE,
  HeadBuffer,
  requestFraming,
} from "./write_request_head.ts";
import type { HeadSource } from "./types.ts";

function source(headers: HeadersInit, over: Partial<HeadSource> = {}): HeadSource {
  return {
    headers: new Headers(headers),
    host: "member:8080",
    clientHost: "www.example.com",
    peer: "203.0.113.9",
    peerTrusted: false,
    proto: "https",
    upgrade: false,
    ...over,
  };
}

function head(src: HeadSource, method = "GET", target = "/a?b=1", framing = FRAMING_NONE): string {
  const out = new HeadBuffer(64);
  const n = buildRequestHead(out, method, target, src, framing);
  let s = "";
  for (let i = 0; i < n; i++) s += String.fromCharCode(out.buf[i]);
  return s;
}

Deno.test("buildRequestHead writes request line, Host, headers and X-Forwarded-*", () => {
  assert.equal(
    head(source({ "Accept": "*/*", "Host": "www.example.com", "X-Custom": "1" })),
    "GET /a?b=1 HTTP/1.1\r\nHost: member:8080\r\naccept: */*\r\nx-custom: 1\r\n" +
      "X-Forwarded-For: 203.0.113.9\r\nX-Forwarded-Proto: https\r\n" +
      "X-Forwarded-Host: www.example.com\r\n\r\n",
  );
});

Deno.test("buildRequestHead drops hop-by-hop headers and those named in Connection", () => {
  const s = head(source([
    ["Connection", "keep-alive, X-Secret, close"],
    ["Connection", "x-other"],
    ["Keep-Alive", "timeout=5"],
    ["Proxy-Connection", "keep-alive"],
    ["TE", "trailers"],
    ["Trailer", "x-t"],
    ["Transfer-Encoding", "chunked"],
    ["Upgrade", "websocket"],
    ["Content-Length", "10"],
    ["Expect", "100-continue"],
    ["X-Secret", "s"],
    ["X-Other", "o"],
    ["Proxy-Authorization", "Basic eA=="],
    ["Cookie", "a=1"],
  ]));
  assert.equal(
    s,
    "GET /a?b=1 HTTP/1.1\r\nHost: member:8080\r\ncookie: a=1\r\n" +
      "proxy-authorization: Basic eA==\r\nX-Forwarded-For: 203.0.113.9\r\n" +
      "X-Forwarded-Proto: https\r\nX-Forwarded-Host: www.example.com\r\n\r\n",
  );
});

Deno.test("buildRequestHead keeps Upgrade and sends Connection: upgrade for WebSocket", () => {
  const s = head(
    source({
      "Connection": "Upgrade",
      "Upgrade": "websocket",
      "Sec-WebSocket-Key": "k",
      "Sec-WebSocket-Version": "13",
    }, { upgrade: true }),
  );
  assert.equal(
    s,
    "GET /a?b=1 HTTP/1.1\r\nHost: member:8080\r\nsec-websocket-key: k\r\n" +
      "sec-websocket-version: 13\r\nupgrade: websocket\r\nX-Forwarded-For: 203.0.113.9\r\n" +
      "X-Forwarded-Proto: https\r\nX-Forwarded-Host: www.example.com\r\n" +
      "Connection: upgrade\r\n\r\n",
  );
});

Deno.test("buildRequestHead replaces X-Forwarded-* from an untrusted peer", () => {
  const s = head(source({
    "X-Forwarded-For": "1.1.1.1",
    "X-Forwarded-Proto": "http",
    "X-Forwarded-Host": "evil.example",
  }));
  assert.match(s, /\r\nX-Forwarded-For: 203\.0\.113\.9\r\n/);
  assert.match(s, /\r\nX-Forwarded-Proto: https\r\n/);
  assert.match(s, /\r\nX-Forwarded-Host: www\.example\.com\r\n/);
  assert.doesNotMatch(s, /1\.1\.1\.1|evil|x-forwarded/);
});

Deno.test("buildRequestHead extends X-Forwarded-* from a trusted peer", () => {
  const s = head(
    source([
      ["X-Forwarded-For", "1.1.1.1"],
      ["X-Forwarded-For", "2.2.2.2"],
      ["X-Forwarded-Proto", "http"],
      ["X-Forwarded-Host", "front.example"],
    ], { peerTrusted: true }),
  );
  assert.match(s, /\r\nX-Forwarded-For: 1\.1\.1\.1, 2\.2\.2\.2, 203\.0\.113\.9\r\n/);
  assert.match(s, /\r\nX-Forwarded-Proto: http\r\n/);
  assert.match(s, /\r\nX-Forwarded-Host: front\.example\r\n/);
});

Deno.test("buildRequestHead from a trusted peer without X-Forwarded-* writes its own", () => {
  const s = head(source({}, { peerTrusted: true, proto: "http" }));
  assert.match(s, /\r\nX-Forwarded-For: 203\.0\.113\.9\r\nX-Forwarded-Proto: http\r\n/);
});

Deno.test("buildRequestHead omits X-Forwarded-For and -Host when peer and host are empty", () => {
  const s = head(source({}, { peer: "", clientHost: "" }));
  assert.equal(s, "GET /a?b=1 HTTP/1.1\r\nHost: member:8080\r\nX-Forwarded-Proto: https\r\n\r\n");
});

Deno.test("buildRequestHead writes Content-Length or chunked framing", () => {
  assert.match(head(source({}), "POST", "/", 12), /\r\nContent-Length: 12\r\n\r\n$/);
  assert.match(
    head(source({}), "POST", "/", FRAMING_CHUNKED),
    /\r\nTransfer-Encoding: chunked\r\n\r\n$/,
  );
  assert.doesNotMatch(head(source({}), "GET", "/", FRAMING_NONE), /Content-Length|Transfer/);
});

Deno.test("buildRequestHead writes header bytes 0x80-0xFF as single bytes and grows", () => {
  const big = "v".repeat(10_000);
  const out = new HeadBuffer(16);
  const src = source({ "X-Latin": "caf\u00e9", "X-Big": big });
  const n = buildRequestHead(out, "GET", "/", src, FRAMING_NONE);
  const bytes = out.buf.subarray(0, n);
  const at = bytes.indexOf(0xe9);
  assert.ok(at > 0);
  assert.deepEqual([...bytes.subarray(at - 3, at + 2)], [0x63, 0x61, 0x66, 0xe9, 0x0d]);
  assert.ok(out.buf.length >= n && n > 10_000);
});

Deno.test("HeadBuffer.encode writes chars above U+00FF as UTF-8", () => {
  const out = new HeadBuffer(4);
  const n = out.encode("\u00e9/\u20ac");
  assert.deepEqual([...out.buf.subarray(0, n)], [0xe9, 0x2f, 0xe2, 0x82, 0xac]);
});

Deno.test("requestFraming picks Content-Length, chunked or none", () => {
  assert.equal(requestFraming("GET", null, -1), FRAMING_NONE);
  assert.equal(requestFraming("POST", null, -1), 0);
  assert.equal(requestFraming("PUT", null, -1), 0);
  assert.equal(requestFraming("PATCH", null, -1), 0);
  assert.equal(requestFraming("POST", new Uint8Array(5), -1), 5);
  const stream = new ReadableStream<Uint8Array>();
  assert.equal(requestFraming("POST", stream, 7), 7);
  assert.equal(requestFraming("POST", stream, -1), FRAMING_CHUNKED);
});
