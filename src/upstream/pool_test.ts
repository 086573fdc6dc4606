import assert from "node:assert/strict";
import { parseMemberAddress } from "../config/address.ts";
import type { MemberConfig, PoolConfig } from "../config/types.ts";
import { createMetrics } from "../observe/families.ts";
import { AffinityKey } from "./affinity.ts";
import { ManualClock } from "../base/clock.ts";
import { Outcome, Pool } from "./pool.ts";
import type { MemberTry, RequestFacts } from "./pool_request.ts";

function members(...ports: number[]): MemberConfig[] {
  return ports.map((p) => {
    const parsed = parseMemberAddress(`127.0.0.1:${p}`);
    return { address: parsed.canonical, parsed, weight: 1 };
  });
}

function pool(over: Partial<PoolConfig> = {}, ports = [1, 2, 3]) {
  const clock = new ManualClock();
  const settings: PoolConfig = {
    name: "p",
    members: members(...ports),
    members_from: "file",
    balance: "round_robin",
    passive_health: { failures: 2, cooldown: 10_000 },
    retries: 2,
    keepalive: 4,
    protocol: "http",
    scheme: "http",
    ...over,
  };
  const p = new Pool({
    settings,
    deps: { metrics: createMetrics(), key: new AffinityKey(), clock },
    readPem: () => "",
    idleTimeout: 1000,
  });
  return { p, clock };
}

function facts(headers: Record<string, string> = {}, method = "GET", secure = false): RequestFacts {
  return { req: new Request("http://a.test/", { method, headers }), client: "192.0.2.1", secure };
}

/** One attempt as the handler reports it. */
function tried(r: { current?: unknown; epoch: number }, streaming = false): MemberTry {
  return {
    member: r.current as MemberTry["member"],
    epoch: r.epoch,
    streaming,
    verdictPending: false,
  };
}

Deno.test("Pool.choose follows the policy and counts members in flight until released", () => {
  const { p } = pool();
  const r = p.start(facts(), false);
  const a = p.choose(r)!;
  assert.equal(a.inflight, 1);
  assert.equal(r.attempts, 1);
  p.release(a);
  assert.equal(a.inflight, 0);
  const order = [
    a,
    ...[0, 1, 2].map(() => {
      const m = p.choose(p.start(facts(), false))!;
      p.release(m);
      return m;
    }),
  ].map((m) => m.address);
  assert.deepEqual(order, ["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3", "127.0.0.1:1"]);
});

Deno.test("Pool.report ejects after consecutive failures; choose skips the ejected member", () => {
  const { p, clock } = pool({ retries: 0 });
  const first = p.set.members[0];
  for (let i = 0; i < 2; i++) {
    const r = p.start(facts(), false);
    r.pinned = first;
    const m = p.choose(r)!;
    assert.equal(m, first);
    p.release(m);
    p.report(tried(r), Outcome.NO_ANSWER);
  }
  assert.ok(first.health.isEjected(clock.now()));
  for (let i = 0; i < 4; i++) {
    const r = p.start(facts(), false);
    r.pinned = first;
    const m = p.choose(r)!;
    p.release(m);
    assert.notEqual(m, first);
  }
});

Deno.test("Pool.choose tries the member ejected longest ago when every member is ejected", () => {
  const { p, clock } = pool({ retries: 0 }, [1, 2]);
  const [a, b] = p.set.members;
  for (const m of [b, a]) {
    for (let i = 0; i < 2; i++) {
      const r = p.start(facts(), false);
      r.pinned = m;
      p.release(p.choose(r)!);
      p.report(tried(r), Outcome.CONNECT_FAILED);
    }
    clock.advance(1);
  }
  const r = p.start(facts(), false);
  assert.equal(p.choose(r), b);
});

Deno.test("Pool.report of a streamed answer waits for the body's end", () => {
  const { p } = pool({ passive_health: { failures: 1, cooldown: 10_000 } });
  const r = p.start(facts(), false);
  const m = p.choose(r)!;
  const t = tried(r, true);
  p.report(t, 200);
  assert.equal(t.verdictPending, true);
  assert.equal(m.health.failures, 0);
  p.report(t, Outcome.BODY_BROKEN);
  assert.equal(m.health.probation, true, "a body broken after the head ejects");
  p.report(t, Outcome.BODY_BROKEN);
  assert.equal(m.health.failures, 1, "the verdict is given once");
});

Deno.test("Pool.retry allows retries up to `retries`, on untried members, for replayable bodies", () => {
  const { p } = pool({ retries: 1 });
  const r = p.start(facts(), false);
  assert.equal(r.retryable, true);
  r.replayable = true;
  p.choose(r);
  assert.equal(p.retry(r, "status"), true);
  p.choose(r);
  assert.equal(r.attempts, 2);
  assert.equal(p.retry(r, "status"), false, "retries used up");

  const post = p.start(facts({}, "POST"), false);
  post.replayable = true;
  p.choose(post);
  assert.equal(p.retry(post, "status"), false, "POST is not idempotent");
  assert.equal(p.retry(post, "connect"), true, "but nothing was written");

  const big = p.start(facts(), false);
  big.replayable = false;
  p.choose(big);
  assert.equal(p.retry(big, "connect"), false, "a streamed body is sent once");

  const ws = p.start(facts(), true);
  ws.replayable = true;
  assert.equal(ws.retryable, false);
  p.choose(ws);
  assert.equal(p.retry(ws, "connect"), false, "a WebSocket handshake is never retried");
});

Deno.test("Pool.start pins the member an affinity cookie names; finish sets the cookie once", () => {
  const { p } = pool({ balance: "hash", hash: { by: "cookie", name: "NODE", cookie_max_age: 0 } });
  const third = p.set.members[2];
  const r = p.start(facts({ cookie: `NODE=${third.affinity}` }), false);
  assert.equal(r.pinned, third);
  assert.equal(p.choose(r), third);
  assert.equal(p.finish(r, third), undefined, "the request held it already");
  const fresh = p.start(facts({}, "GET", true), false);
  const m = p.choose(fresh)!;
  assert.equal(
    p.finish(fresh, m),
    `NODE=${m.affinity}; Path=/; HttpOnly; SameSite=Lax; Secure`,
  );
});
