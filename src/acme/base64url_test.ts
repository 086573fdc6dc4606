import assert from "node:assert/strict";
import { b64url, fromB64url } from "./base64url.ts";

Deno.test("b64url: no padding, - and _ for + and /", () => {
  assert.equal(b64url(new Uint8Array([0xfb, 0xff])), "-_8");
  assert.equal(b64url("{}"), "e30");
  assert.equal(b64url(""), "");
  assert.equal(b64url(new Uint8Array([1, 2, 3])), "AQID");
});

Deno.test("fromB64url: round trip, refuses padding and foreign characters", () => {
  for (let n = 0; n < 40; n++) {
    const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 37 + n) & 0xff);
    assert.deepEqual(fromB64url(b64url(bytes)), bytes);
  }
  assert.throws(() => fromB64url("AQ=="), SyntaxError);
  assert.throws(() => fromB64url("A+B/"), SyntaxError);
  assert.throws(() => fromB64url("AQIDB"), SyntaxError);
});
