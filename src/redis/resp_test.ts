import assert from "node:assert/strict";
import { Gen } from "../base/_gen.ts";
import { encodeCommand, RespError, RespProtocolError, RespReader, type RespValue } from "./resp.ts";

const enc = new TextEncoder();

function readAll(text: string): RespValue[] {
  const r = new RespReader();
  r.push(enc.encode(text));
  const out: RespValue[] = [];
  for (let v = r.next(); v !== undefined; v = r.next()) out.push(v.value);
  return out;
}

Deno.test("encodeCommand writes an array of bulk strings with UTF-8 byte lengths", () => {
  assert.equal(
    new TextDecoder().decode(encodeCommand(["GET", "k", "é"])),
    "*3\r\n$3\r\nGET\r\n$1\r\nk\r\n$2\r\né\r\n",
  );
});

Deno.test("RespReader reads every RESP2 reply type", () => {
  const [s, e, i, b, nb, a, na, nested] = readAll(
    "+OK\r\n-NOSCRIPT No matching script\r\n:-42\r\n$5\r\nhel\r\n\r\n$-1\r\n*2\r\n:1\r\n$1\r\nx\r\n*-1\r\n*1\r\n*0\r\n",
  );
  assert.equal(s, "OK");
  assert.ok(e instanceof RespError);
  assert.equal(e.code, "NOSCRIPT");
  assert.equal(e.message, "NOSCRIPT No matching script");
  assert.equal(i, -42);
  assert.equal(b, "hel\r\n");
  assert.equal(nb, null);
  assert.deepEqual(a, [1, "x"]);
  assert.equal(na, null);
  assert.deepEqual(nested, [[]]);
});

Deno.test("RespReader waits for the rest of a reply split anywhere", () => {
  const text = "*3\r\n:10\r\n$4\r\nabcd\r\n+done\r\n:7\r\n";
  const bytes = enc.encode(text);
  const r = new RespReader();
  const out: RespValue[] = [];
  for (const b of bytes) {
    r.push(new Uint8Array([b]));
    for (let v = r.next(); v !== undefined; v = r.next()) out.push(v.value);
  }
  assert.deepEqual(out, [[10, "abcd", "done"], 7]);
  assert.equal(r.pending, 0);
});

Deno.test("RespReader refuses what is not RESP2", () => {
  const bad = [
    "?what\r\n", // unknown type
    ":12a\r\n", // not an integer
    ":01\r\n", // leading zero
    "$3\r\nabcd\r\n", // bulk not ended by CRLF
    "$-2\r\n", // negative length
    `$${2 * 1024 * 1024}\r\n`, // bulk too long
    "*2000\r\n", // array too long
    "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", // nested too deep
    "+OK\n", // bare LF
    "+O\rK\r\n", // CR without LF
    "+" + "x".repeat(70_000), // a line that never ends
  ];
  for (const text of bad) {
    assert.throws(() => readAll(text), RespProtocolError, JSON.stringify(text.slice(0, 20)));
  }
});

Deno.test("RespReader fuzz slice: random bytes end in a reply, a wait or a RespProtocolError", () => {
  const cases = Number(Deno.env.get("SCALWS_FUZZ_CASES") ?? 3000);
  const g = new Gen(7);
  const pieces = [
    "+",
    "-",
    ":",
    "$",
    "*",
    "\r\n",
    "\r",
    "\n",
    "1",
    "0",
    "-1",
    "3",
    "abc",
    "x",
    "\x00",
  ];
  for (let c = 0; c < cases; c++) {
    let text = "";
    for (let n = 1 + g.int(12); n > 0; n--) text += g.pick(pieces);
    const r = new RespReader();
    r.push(enc.encode(text));
    try {
      for (let i = 0; i < 64 && r.next() !== undefined; i++) { /* drain */ }
    } catch (e) {
      if (!(e instanceof RespProtocolError)) throw new Error(`${JSON.stringify(text)}: ${e}`);
    }
  }
});
