import assert from "node:assert/strict";
import { spanMethod } from "./http_method.ts";

Deno.test("spanMethod: known methods as they are, others _OTHER with the original kept", () => {
  for (
    const m of ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"]
  ) {
    assert.deepEqual(spanMethod(m), { attribute: m, name: m, original: undefined });
  }
  assert.deepEqual(spanMethod("PURGE"), { attribute: "_OTHER", name: "HTTP", original: "PURGE" });
  // Methods are case-sensitive (RFC 9110 section 9.1): "get" is not GET.
  assert.deepEqual(spanMethod("get"), { attribute: "_OTHER", name: "HTTP", original: "get" });
});
