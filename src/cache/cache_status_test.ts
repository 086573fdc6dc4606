import assert from "node:assert/strict";
import { forwardStatus, hitStatus } from "./cache_status.ts";

Deno.test("Cache-Status values name the cache scalwsd", () => {
  assert.equal(hitStatus(42), "scalwsd; hit; ttl=42");
  assert.equal(hitStatus(-3, "stale-if-error"), "scalwsd; hit; ttl=-3; detail=stale-if-error");
  assert.equal(
    forwardStatus({ fwd: "uri-miss", status: 200, stored: true, ttl: 60 }),
    "scalwsd; fwd=uri-miss; fwd-status=200; stored; ttl=60",
  );
  assert.equal(forwardStatus({ fwd: "bypass" }), "scalwsd; fwd=bypass");
  assert.equal(
    forwardStatus({ fwd: "stale", status: 304, collapsed: true }),
    "scalwsd; fwd=stale; fwd-status=304; collapsed",
  );
});
