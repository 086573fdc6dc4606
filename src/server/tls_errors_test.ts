import assert from "node:assert/strict";
import { setLogSink } from "../observe/log.ts";
import { handshakeFailed, LogBudget, tlsReason } from "./tls_errors.ts";

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

Deno.test("handshakeFailed logs the reason, at most 10 lines per 10 s, then says how many it left out", () => {
  const lines: Record<string, unknown>[] = [];
  setLogSink((l) => lines.push(JSON.parse(l)));
  try {
    // Far from any window another test may have opened: the process-wide budget starts afresh.
    const t0 = 1e12;
    for (let i = 0; i < 25; i++) {
      handshakeFailed({
        listener: "https",
        peer: "192.0.2.7",
        sni: i === 0 ? null : "a.test",
        err: new Error("InvalidData: received fatal alert: BadCertificate"),
      }, t0 + i);
    }
    assert.equal(lines.length, 10);
    assert.deepEqual(
      { ...lines[0], time: undefined },
      {
        time: undefined,
        level: "warn",
        event: "tls_handshake_failed",
        listener: "https",
        peer: "192.0.2.7",
        reason: "received fatal alert: BadCertificate",
      },
    );
    assert.equal(lines[1].sni, "a.test");
    handshakeFailed({ listener: "admin.remote", peer: "::1", sni: "", err: "eof" }, t0 + 10_000);
    assert.equal(lines.length, 11);
    assert.equal(lines[10].suppressed, 15);
    assert.equal(lines[10].listener, "admin.remote");
    handshakeFailed({ listener: "https", peer: "::1", sni: "", err: "eof" }, t0 + 10_001);
    assert.equal(lines[11].suppressed, undefined, "reported once");
  } finally {
    setLogSink(null);
  }
});
