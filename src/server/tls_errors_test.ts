import assert from "node:assert/strict";
import { LogBudget, tlsReason } from "./tls_errors.ts";

Deno.test("LogBudget allows its lines per window and counts what it left out", () => {
  const b = new LogBudget(3, 1000);
  const seen = [0, 1, 2, 3, 4, 5].map((t) => b.take(t));
  assert.deepEqual(seen, [true, true, true, false, false, false]);
  assert.equal(b.suppressed, 0);
  assert.equal(b.take(1000), true, "a new window");
  assert.equal(b.suppressed, 3, "the lines left out in the window before");
  assert.equal(b.take(1500), true);
});

Deno.test("tlsReason drops Deno's error class name", () => {
  assert.equal(
    tlsReason(new Error("InvalidData: received fatal alert: UnknownCA")),
    "received fatal alert: UnknownCA",
  );
  assert.equal(tlsReason("peer is incompatible"), "peer is incompatible");
});
