import assert from "node:assert/strict";
import { bytes } from "./_bytes.ts";
import { ChunkedDecoder } from "../wire/mod.ts";
import { ChunkError, REQUEST_CHUNKED } from "./read_chunked_request.ts";
import { decodeChunked } from "../../tests/_support/chunked.ts";

/** Decodes `input` fed in pieces of `step` bytes: the body and where it ended, or the error. */
function decode(input: string, step = Infinity): { body: string; rest: number; done: boolean } {
  return decodeChunked(REQUEST_CHUNKED, input, step);
}

function refused(input: string): void {
  for (const step of [Infinity, 1]) {
    assert.throws(() => decode(input, step), ChunkError, `${JSON.stringify(input)} step ${step}`);
  }
}

Deno.test("ChunkedBody decodes chunks, extensions and trailers in any split", () => {
  const input = '5\r\nhello\r\n6;ext=1;q="x y"\r\n world\r\n0\r\nX-T: 1\r\nY: 2\r\n\r\nNEXT';
  for (const step of [Infinity, 1, 2, 3, 7]) {
    const r = decode(input, step);
    assert.deepEqual(r, { body: "hello world", rest: input.length - 4, done: true }, `${step}`);
  }
  assert.equal(decode("A\r\n0123456789\r\n0\r\n\r\n").body, "0123456789");
  assert.equal(decode("0003;a=b;c\r\nabc\r\n0;x\r\n\r\n").body, "abc");
  assert.equal(decode("3 ;x\r\nabc\r\n0\r\n\r\n").body, "abc");
  assert.equal(decode("0\r\n\r\n").done, true);
});

Deno.test("ChunkedBody is not done until the final CRLF", () => {
  assert.equal(decode("3\r\nabc\r\n0\r\n").done, false);
  assert.equal(decode("3\r\nabc\r\n0\r\n\r").done, false);
  assert.equal(decode("3\r\nabc\r\n0\r\nX: y\r\n").done, false);
});

Deno.test("ChunkedBody refuses invalid sizes, extensions, line ends and trailers", () => {
  for (
    const bad of [
      "0x3\r\nabc\r\n0\r\n\r\n",
      "+3\r\nabc\r\n0\r\n\r\n",
      "-3\r\nabc\r\n0\r\n\r\n",
      " 3\r\nabc\r\n0\r\n\r\n",
      "\r\n",
      "g\r\n",
      "10000000000000003\r\nabc\r\n0\r\n\r\n",
      "FFFFFFFFFFFFFF\r\n",
      "3\nabc\n0\n\n",
      "3\r\nabc\n0\r\n\r\n",
      "3\rabc\r\n0\r\n\r\n",
      "3\r\nabcd\r\n0\r\n\r\n",
      "5\r\nabc\r\n0\r\n\r\n",
      "3;a\x00\r\nabc\r\n0\r\n\r\n",
      "3;a\x01b\r\nabc\r\n0\r\n\r\n",
      "3;a\nabc\r\n0\r\n\r\n",
      "3;a\rb\r\nabc\r\n0\r\n\r\n",
      "3\r\nabc\r\n0\r\nX: a\x00\r\n\r\n",
      "3\r\nabc\r\n0\r\nX: a\rb\r\n\r\n",
      "3\r\nabc\r\n0\r\nX: a\nY: b\r\n\r\n",
      "3\r\nabc\r\n0\r\n folded\r\n\r\n",
      "3\r\nabc\r\n0\r\n: v\r\n\r\n",
      "3\r\nabc\r\n0\r\n\n",
      "3\r\nabc\r\n0\r\n\rX",
      `3;${"a".repeat(5000)}\r\nabc\r\n0\r\n\r\n`,
      `0\r\nX: ${"a".repeat(20000)}\r\n\r\n`,
    ]
  ) refused(bad);
});

Deno.test("ChunkedBody counts the body bytes it reported", () => {
  const d = new ChunkedDecoder(REQUEST_CHUNKED);
  const buf = bytes("3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
  let pos = 0;
  while (!d.done) pos = d.decode(buf, pos, buf.length);
  assert.equal(d.total, 5);
  assert.equal(pos, buf.length);
});

Deno.test("ChunkedBody takes extensions only as RFC 9112 7.1.1 writes them", () => {
  for (
    const good of [
      "3;a\r\nabc\r\n0\r\n\r\n",
      '3;a=b;c;d="x;y=\\"z\\""\r\nabc\r\n0\r\n\r\n',
      "3 ; a = b\r\nabc\r\n0\r\n\r\n",
      '3\t;\ta\t=\t""\r\nabc\r\n0\r\n\r\n',
      "3 \r\nabc\r\n0\r\n\r\n",
      "3;a=b \r\nabc\r\n0;last=1\r\n\r\n",
    ]
  ) assert.equal(decode(good).body, "abc", JSON.stringify(good));
  for (
    const bad of [
      "3;\r\nabc\r\n0\r\n\r\n",
      "3;;a\r\nabc\r\n0\r\n\r\n",
      "3 garbage\r\nabc\r\n0\r\n\r\n",
      "3;a b\r\nabc\r\n0\r\n\r\n",
      "3;a=\r\nabc\r\n0\r\n\r\n",
      "3;=b\r\nabc\r\n0\r\n\r\n",
      "3;a=b c\r\nabc\r\n0\r\n\r\n",
      '3;a="open\r\nabc\r\n0\r\n\r\n',
      '3;a="x"y\r\nabc\r\n0\r\n\r\n',
      "3;a=b=c\r\nabc\r\n0\r\n\r\n",
      "3;a(b)\r\nabc\r\n0\r\n\r\n",
      "0;\r\n\r\n",
    ]
  ) refused(bad);
});
