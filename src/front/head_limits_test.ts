import assert from "node:assert/strict";
import { bytes } from "./_bytes.ts";
import { headLimitStatus } from "./head_limits.ts";
import { findHeadEnd } from "../wire/mod.ts";
import { parseRequestHead, RequestHead } from "./parse_request_head.ts";

function head(s: string): RequestHead {
  const b = bytes(s);
  return parseRequestHead(b, 0, findHeadEnd(b, 0, b.length), new RequestHead());
}

Deno.test("headLimitStatus: 414 for the target, then 431 for count and size; 0 turns off", () => {
  const limits = { maxUri: 10, maxHeaderCount: 2, maxHeaderSize: 30 };
  assert.equal(headLimitStatus(head("GET /123456789 HTTP/1.1\r\nHost: a\r\n\r\n"), limits), 0);
  assert.equal(headLimitStatus(head("GET /1234567890 HTTP/1.1\r\nHost: a\r\n\r\n"), limits), 414);
  // 414 wins over 431.
  const both = head("GET /1234567890 HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n");
  assert.equal(headLimitStatus(both, limits), 414);
  assert.equal(
    headLimitStatus(head("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n"), limits),
    431,
  );
  // host + a 20-byte value: 4 + 1 + 4 + 1 + 20 + 4 = 34 > 30.
  const big = head(`GET / HTTP/1.1\r\nHost: a\r\nX: ${"v".repeat(20)}\r\n\r\n`);
  assert.equal(big.fieldBytes, 9 + 25);
  assert.equal(headLimitStatus(big, limits), 431);
  assert.equal(headLimitStatus(big, { maxUri: 0, maxHeaderCount: 0, maxHeaderSize: 0 }), 0);
});

Deno.test("headLimitStatus: a repeated field name counts once against maxHeaderCount", () => {
  const limits = { maxUri: 0, maxHeaderCount: 2, maxHeaderSize: 0 };
  const repeated = head(
    "GET / HTTP/1.1\r\nHost: a\r\nCookie: a=1\r\nCookie: b=2\r\nCookie: c=3\r\n\r\n",
  );
  assert.equal(repeated.fieldCount, 4);
  assert.equal(headLimitStatus(repeated, limits), 0);
  const three = head("GET / HTTP/1.1\r\nHost: a\r\nCookie: a=1\r\nX: 1\r\nCookie: b=2\r\n\r\n");
  assert.equal(headLimitStatus(three, limits), 431);
});
