import assert from "node:assert/strict";
import { formatPool } from "./ctl_format.ts";

Deno.test("formatPool shows the member source, the last update and the last discovery error", () => {
  const pool = {
    name: "api",
    balance: "round_robin",
    members_from: "dns",
    source: "dns",
    updated_at: "2026-12-01T12:00:00.000Z",
    last_error: "api.internal: name server answered SERVFAIL",
    last_error_at: "2026-12-01T12:01:00.000Z",
    members: [],
  };
  assert.equal(
    formatPool(pool),
    "pool api  balance round_robin  members_from dns  members 0\n" +
      '  source dns  updated 2026-12-01T12:00:00.000Z  last error 2026-12-01T12:01:00.000Z "api.internal: name server answered SERVFAIL"\n' +
      "  (no members: requests get 503)",
  );
  assert.match(
    formatPool({ ...pool, source: "kubernetes", last_error: null, updated_at: null }),
    /\n {2}source kubernetes {2}updated - {2}last error -\n/,
  );
});
