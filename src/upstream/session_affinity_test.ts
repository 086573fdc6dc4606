import assert from "node:assert/strict";
import type { PoolConfig } from "../config/types.ts";
import { POOL_DEFAULTS } from "../config/_test_defaults.ts";
import { AffinityKey } from "./affinity.ts";
import { ManualClock } from "../base/clock.ts";
import { sessionAffinity } from "./session_affinity.ts";

const BASE: PoolConfig = {
  name: "p",
  members: [],
  ...POOL_DEFAULTS,
};
const A = "0123456789abcdef0123456789abcdef";
const B = "fedcba9876543210fedcba9876543210";

function deps() {
  return { key: new AffinityKey(new Uint8Array(32).fill(7)), clock: new ManualClock() };
}

Deno.test("sessionAffinity is null without sticky or a hash cookie", () => {
  assert.equal(sessionAffinity(BASE, deps()), null);
  const byHeader = {
    ...BASE,
    balance: "hash" as const,
    hash: { by: "header" as const, name: "x", cookie_max_age: 0 },
  };
  assert.equal(sessionAffinity(byHeader, deps()), null);
});

Deno.test("sessionAffinity by hash cookie holds the cookie's value and sets it when it changes", () => {
  const a = sessionAffinity(
    { ...BASE, balance: "hash", hash: { by: "cookie", name: "NODE", cookie_max_age: 60 } },
    deps(),
  )!;
  assert.equal(a.held(`x=1; NODE=${A}`, 0), A);
  assert.equal(a.held(null, 0), undefined);
  assert.equal(a.cookie(A, A, false), undefined);
  assert.equal(
    a.cookie(A, B, true),
    `NODE=${B}; Path=/; HttpOnly; SameSite=Lax; Max-Age=60; Secure`,
  );
  assert.equal(
    a.cookie(undefined, B, false),
    `NODE=${B}; Path=/; HttpOnly; SameSite=Lax; Max-Age=60`,
  );
});

Deno.test("sessionAffinity by sticky pin holds a valid pin until its TTL, then nothing", () => {
  const d = deps();
  const a = sessionAffinity({ ...BASE, sticky: { ttl: 30_000, cookie: "PIN" } }, d)!;
  const set = a.cookie(undefined, A, false)!;
  const m = /^PIN=([^;]+); Path=\/; HttpOnly; SameSite=Lax; Max-Age=30$/.exec(set);
  assert.ok(m, set);
  const header = `PIN=${m[1]}`;
  assert.equal(a.held(header, d.clock.now()), A);
  assert.equal(a.cookie(A, A, false), undefined, "a held pin is not set again");
  assert.equal(a.held(header, d.clock.now() + 31_000), undefined, "expired");
  assert.equal(a.held(`PIN=${m[1].replace(/.$/, "0")}x`, d.clock.now()), undefined, "forged");
});

Deno.test("sessionAffinity prefers sticky over a hash cookie", () => {
  const a = sessionAffinity({
    ...BASE,
    balance: "hash",
    hash: { by: "cookie", name: "NODE", cookie_max_age: 0 },
    sticky: { ttl: 10_000, cookie: "PIN" },
  }, deps())!;
  assert.match(a.cookie(undefined, A, false)!, /^PIN=/);
});
