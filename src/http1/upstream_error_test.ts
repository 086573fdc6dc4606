import assert from "node:assert/strict";
import { ioError, isIoError, malformed, UpstreamError } from "./upstream_error.ts";

Deno.test("UpstreamError carries phase, kind, timeout, written and cause", () => {
  const cause = new Error("x");
  const e = new UpstreamError("write", "client", "request body failed", false, true, cause);
  assert.ok(e instanceof Error);
  assert.equal(e.name, "UpstreamError");
  assert.equal(e.phase, "write");
  assert.equal(e.kind, "client");
  assert.equal(e.timeout, true);
  assert.equal(e.written, false);
  assert.equal(e.cause, cause);
  assert.equal(malformed("bad").phase, "head");
  assert.equal(malformed("bad", "body").kind, "malformed");
});

Deno.test("ioError maps runtime I/O errors and timeouts, and returns bugs unchanged", () => {
  const reset = ioError("head", new Deno.errors.ConnectionReset("r"), true, false, "reading");
  assert.ok(reset instanceof UpstreamError);
  assert.equal(reset.kind, "reset");
  assert.equal(reset.written, true);
  const tls = ioError("body", new Deno.errors.InvalidData("bad record"), true, false, "reading");
  assert.equal((tls as UpstreamError).kind, "tls");
  const timeout = ioError("head", new Deno.errors.Interrupted("x"), true, true, "waiting");
  assert.equal((timeout as UpstreamError).kind, "timeout");
  assert.equal((timeout as UpstreamError).timeout, true);
  const bug = new TypeError("undefined is not a function");
  assert.equal(ioError("head", bug, true, false, "reading"), bug);
  assert.equal(isIoError(new Deno.errors.BrokenPipe("p")), true);
  assert.equal(isIoError(new Error("plain")), false);
});
