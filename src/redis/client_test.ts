/**
 * `RedisPool` against a Redis that accepts and never answers (stalled): every call fails with
 * reason `timeout` at its own deadline, not at the next tick of a coarse sweep, and a link whose
 * reply is four timeouts late is closed.
 */
import assert from "node:assert/strict";
import { RedisCallError, RedisPool } from "./client.ts";
import { sleep } from "../../tests/_support/wait.ts";

/** A listener that accepts and reads, never answering; closed with the test. */
function stalledRedis() {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const c of l) {
      conns.push(c);
      c.readable.pipeTo(new WritableStream()).catch(() => {});
    }
  })().catch(() => {});
  return {
    port: (l.addr as Deno.NetAddr).port,
    async [Symbol.asyncDispose]() {
      l.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed by the pool */ }
      }
      await accepting;
    },
  };
}

Deno.test("redis pool: calls to a stalled Redis fail at their own deadline", async () => {
  await using redis = stalledRedis();
  const TIMEOUT = 400;
  const pool = new RedisPool({
    address: { kind: "tcp", hostname: "127.0.0.1", port: redis.port },
    timeout: TIMEOUT,
    connections: 1,
  });
  try {
    // Open the connection first, so that the calls below wait only for their replies.
    await pool.call(["PING"]).catch(() => {});
    const late: number[] = [];
    const one = async () => {
      const t0 = performance.now();
      const err = await pool.call(["PING"]).then(() => null, (e) => e);
      assert.ok(err instanceof RedisCallError, String(err));
      assert.equal(err.reason, "timeout");
      late.push(performance.now() - t0 - TIMEOUT);
    };
    const calls: Promise<void>[] = [];
    for (let i = 0; i < 3; i++) {
      calls.push(one());
      await sleep(30);
    }
    await Promise.all(calls);
    // A sweep every timeout/4 (100 ms) failed one of three calls 30 ms apart 60 ms late or more.
    for (const ms of late) assert.ok(ms >= -1 && ms < 45, `a call failed ${late} ms late`);
  } finally {
    pool.close();
  }
});

Deno.test("redis pool: a link whose reply is four timeouts late is closed", async () => {
  await using redis = stalledRedis();
  const pool = new RedisPool({
    address: { kind: "tcp", hostname: "127.0.0.1", port: redis.port },
    timeout: 20,
    connections: 1,
  });
  try {
    await pool.call(["PING"]).catch(() => {});
    const err = await pool.call(["PING"]).then(() => null, (e) => e);
    assert.equal(err?.reason, "timeout");
    assert.equal(pool.state().connections, 1);
    const t0 = performance.now();
    while (pool.state().connections > 0 && performance.now() - t0 < 1000) await sleep(5);
    assert.equal(pool.state().connections, 0, "the stuck link is still open");
  } finally {
    pool.close();
  }
});
