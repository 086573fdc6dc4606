import assert from "node:assert/strict";
import { ChunkedDecoder } from "../wire/mod.ts";
import { RESPONSE_CHUNKED } from "./read_chunked_response.ts";
import { UpstreamError } from "./upstream_error.ts";
import { decodeChunked } from "../../tests/_support/chunked.ts";
import { bytesOf as bytes } from "../../tests/_support/bytes.ts";

/** Decodes `input` fed in pieces of `step` bytes; returns body and the position after it. */
function decode(input: string, step = Infinity): { body: string; rest: number; done: boolean } {
  return decodeChunked(RESPONSE_CHUNKED, input, step);
}

Deno.test("ChunkedDecoder decodes chunks, extensions and trailers", () => {
  const input = '5\r\nhello\r\n6;ext=1;q="x"\r\n world\r\n0\r\nX-T: 1\r\nY: 2\r\n\r\nNEXT';
  for (const step of [Infinity, 1, 2, 3, 7]) {
    const r = decode(input, step);
    assert.equal(r.body, "hello world", `step ${step}`);
    assert.equal(r.done, true);
    assert.equal(r.rest, input.length - 4);
  }
});

Deno.test("ChunkedDecoder accepts upper-case hex, leading zeros and bare LF", () => {
  assert.equal(decode("A\r\n0123456789\r\n0\r\n\r\n").body, "0123456789");
  assert.equal(decode("0000a\r\n0123456789\r\n0\r\n\r\n").body, "0123456789");
  assert.equal(decode("3\nabc\n0\n\n").body, "abc");
  assert.equal(decode("3 ; x\r\nabc\r\n0\r\n\r\n").body, "abc");
});

Deno.test("ChunkedDecoder reports not done until the final CRLF", () => {
  assert.equal(decode("3\r\nabc\r\n0\r\n").done, false);
  assert.equal(decode("3\r\nabc\r\n0\r\n\r").done, false);
  assert.equal(decode("3\r\nabc\r\n0\r\nX: y\r\n").done, false);
});

Deno.test("ChunkedDecoder lets the caller read chunk data directly", () => {
  const d = new ChunkedDecoder(RESPONSE_CHUNKED);
  const head = bytes("10\r\n");
  assert.equal(d.decode(head, 0, head.length), head.length);
  assert.equal(d.inData, true);
  assert.equal(d.remaining, 16);
  d.consumeData(16);
  assert.equal(d.inData, false);
  const tail = bytes("\r\n0\r\n\r\n");
  let pos = 0;
  while (!d.done) pos = d.decode(tail, pos, tail.length);
  assert.equal(pos, tail.length);
});

Deno.test("ChunkedDecoder refuses bad framing", () => {
  const bad = [
    "x\r\n",
    ";\r\n",
    "\r\n",
    "-1\r\n",
    "5\r\nhelloX\r\n",
    "5\rhello",
    "3\r\nabc\r\n0\r\n\rX",
    "3\x00\r\n",
    "3;a\x01\r\n",
    "fffffffffffffff\r\n",
    "1;" + "e".repeat(5000) + "\r\n",
  ];
  for (const input of bad) {
    assert.throws(() => decode(input), (err: unknown) => {
      assert.ok(err instanceof UpstreamError, JSON.stringify(input));
      assert.equal(err.kind, "malformed");
      assert.equal(err.phase, "body");
      return true;
    }, JSON.stringify(input));
  }
});

Deno.test("ChunkedDecoder accepts a size of 13 hex digits", () => {
  const d = new ChunkedDecoder(RESPONSE_CHUNKED);
  const b = bytes("fffffffffffff\r\n");
  d.decode(b, 0, b.length);
  assert.equal(d.remaining, 0xfffffffffffff);
});
