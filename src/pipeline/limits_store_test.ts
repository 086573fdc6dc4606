/**
 * `LimitsStore.decide` against a fake Redis that has lost its scripts (it answers `EVALSHA`
 * with `NOSCRIPT`, late) and then stalls: the `EVAL` sent again gets only what is left of the
 * one timeout, so the decision never takes longer than `timeout`.
 */
import assert from "node:assert/strict";
import { parseMemberAddress } from "../config/mod.ts";
import { LimitsStore } from "./limits_store.ts";

Deno.test("LimitsStore: a NOSCRIPT reply and a stall fit in one timeout, not two", async () => {
  const TIMEOUT = 100;
  const NOSCRIPT_AFTER = 60;
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  const serving = (async () => {
    for await (const c of l) {
      conns.push(c);
      (async () => {
        const buf = new Uint8Array(64 * 1024);
        let first = true;
        while (await c.read(buf) !== null) {
          if (!first) continue; // stalled: every later command is read and never answered
          first = false;
          await new Promise((r) => setTimeout(r, NOSCRIPT_AFTER));
          await c.write(new TextEncoder().encode("-NOSCRIPT No matching script.\r\n"));
        }
      })().catch(() => {});
    }
  })().catch(() => {});
  const port = (l.addr as Deno.NetAddr).port;
  const store = new LimitsStore({
    redis: { address: parseMemberAddress(`127.0.0.1:${port}`), key_prefix: "t:", timeout: TIMEOUT },
    on_error: "local",
  });
  try {
    // The script's SHA-1 is computed at first use (asynchronously): EVALSHA from then on.
    await new Promise((r) => setTimeout(r, 20));
    const t0 = performance.now();
    const outcome = await store.decide("t:k", { rate: 10, burst: 0 });
    const took = performance.now() - t0;
    assert.equal(outcome, "timeout");
    // Two deadlines in a row took NOSCRIPT_AFTER + TIMEOUT (160 ms).
    assert.ok(took < TIMEOUT + 40, `the decision took ${took} ms`);
  } finally {
    store.close();
    l.close();
    for (const c of conns) {
      try {
        c.close();
      } catch { /* closed */ }
    }
    await serving;
  }
});
