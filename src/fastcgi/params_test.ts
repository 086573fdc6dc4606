import assert from "node:assert/strict";
import { decodeParams, ParamsBuffer } from "./params.ts";

Deno.test("ParamsBuffer: short lengths take one byte, long ones four with the top bit", () => {
  const p = new ParamsBuffer(4);
  p.add("A", "b");
  p.add("LONG", "x".repeat(200));
  const b = p.bytes();
  assert.deepEqual([...b.subarray(0, 4)], [1, 1, 0x41, 0x62]);
  assert.deepEqual([...b.subarray(4, 9)], [4, 0x80, 0, 0, 200]);
  assert.equal(p.length, 4 + 5 + 4 + 200);
  assert.deepEqual(decodeParams(b), [["A", "b"], ["LONG", "x".repeat(200)]]);
  p.reset();
  assert.equal(p.length, 0);
});

Deno.test("ParamsBuffer: byte strings stay bytes, other text is UTF-8", () => {
  const p = new ParamsBuffer();
  p.add("HTTP_X", "caf\xe9");
  p.add("SCRIPT_NAME", "/\u20ac.php");
  const pairs = decodeParams(p.bytes());
  assert.equal(pairs[0][1], "caf\xe9");
  assert.equal(pairs[1][1], "/\xe2\x82\xac.php");
});

Deno.test("decodeParams: a truncated stream throws", () => {
  assert.throws(() => decodeParams(new Uint8Array([5, 1, 0x41])), RangeError);
  assert.throws(() => decodeParams(new Uint8Array([0x80, 0])), RangeError);
});
