import assert from "node:assert/strict";
import { negotiate } from "./accept_encoding.ts";

Deno.test("negotiate: highest q wins, ties by the offered order, * and q=0", () => {
  const offered = ["br", "gzip"];
  assert.equal(negotiate(null, offered), null);
  assert.equal(negotiate("gzip", offered), "gzip");
  assert.equal(negotiate("gzip, br", offered), "br");
  assert.equal(negotiate("br;q=0.2, gzip;q=0.8", offered), "gzip");
  assert.equal(negotiate("br;q=0, gzip;q=0", offered), null);
  assert.equal(negotiate("*", offered), "br");
  assert.equal(negotiate("*;q=0.5, br;q=0", offered), "gzip");
  assert.equal(negotiate("identity", offered), null);
  assert.equal(negotiate("x-gzip", offered), "gzip");
  assert.equal(negotiate("gzip;q=abc", offered), null);
});
