import assert from "node:assert/strict";
import type { Candidate } from "../types.ts";
import { RoundRobinBalancer } from "./round_robin.ts";
import {
  ctx,
  makeMembers,
  manyMembers,
  NaiveRoundRobin,
  seeded,
  type TestMember,
} from "./_testing.ts";

function names(b: RoundRobinBalancer<TestMember>, count: number): string {
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(b.pick(ctx())?.address ?? "-");
  return out.join(" ");
}

Deno.test("RoundRobinBalancer gives a a b a c a a for weights 5, 1, 1, repeating", () => {
  const b = new RoundRobinBalancer(makeMembers("a:5 b:1 c:1"));
  assert.equal(names(b, 21), "a a b a c a a a a b a c a a a a b a c a a");
});

Deno.test("RoundRobinBalancer rotates in member order for equal weights", () => {
  const b = new RoundRobinBalancer(makeMembers("a b c d"));
  assert.equal(names(b, 9), "a b c d a b c d a");
});

Deno.test("RoundRobinBalancer skips an unavailable member, which gains nothing meanwhile", () => {
  const ms = makeMembers("a:5 b:1 c:1");
  const b = new RoundRobinBalancer(ms);
  const ref = new NaiveRoundRobin(ms);
  ms[0].up = false;
  for (let i = 0; i < 5; i++) assert.equal(b.pick(ctx())!.address, ref.pick(null)!.address);
  ms[0].up = true;
  const seq: string[] = [];
  for (let i = 0; i < 14; i++) {
    const got = b.pick(ctx())!.address;
    assert.equal(got, ref.pick(null)!.address);
    seq.push(got);
  }
  // Back in the sequence, and a did not bank the picks it missed.
  assert.equal(seq.filter((s) => s === "a").length, 10);
});

Deno.test("RoundRobinBalancer never returns a tried member and the tried member gains nothing", () => {
  const ms = makeMembers("a:5 b:1 c:1");
  const b = new RoundRobinBalancer(ms);
  const ref = new NaiveRoundRobin(ms);
  const tried = new Set<Candidate>([ms[0]]);
  for (let i = 0; i < 4; i++) {
    const got = b.pick(ctx({ tried }))!;
    assert.notEqual(got, ms[0]);
    assert.equal(got, ref.pick(tried));
  }
  for (let i = 0; i < 14; i++) assert.equal(b.pick(ctx()), ref.pick(null));
});

Deno.test("RoundRobinBalancer returns undefined for an empty pool or when nothing is eligible", () => {
  assert.equal(new RoundRobinBalancer<TestMember>([]).pick(ctx()), undefined);
  const ms = makeMembers("a b");
  const b = new RoundRobinBalancer(ms);
  ms[0].up = false;
  assert.equal(b.pick(ctx({ tried: new Set([ms[1]]) })), undefined);
  ms[1].up = false;
  assert.equal(b.pick(ctx()), undefined);
  ms[0].up = true;
  assert.equal(b.pick(ctx())!.address, "a");
});

/** Random availability and tried sets; every pick must equal nginx's. */
function compareWithNaive(
  seed: number,
  n: number,
  maxWeight: number,
  steps: number,
  withVersion: boolean,
): void {
  const rnd = seeded(seed);
  const ms = manyMembers(n, () => 1 + Math.floor(rnd() * maxWeight));
  const b = new RoundRobinBalancer(ms);
  const ref = new NaiveRoundRobin(ms);
  let version = 0;
  for (let s = 0; s < steps; s++) {
    if (rnd() < 0.15) {
      const m = ms[Math.floor(rnd() * n)];
      m.up = !m.up;
      version++;
    }
    let tried: Set<Candidate> | null = null;
    if (rnd() < 0.2) {
      tried = new Set();
      for (let k = Math.floor(rnd() * 3); k >= 0; k--) tried.add(ms[Math.floor(rnd() * n)]);
    }
    const want = ref.pick(tried);
    const got = b.pick(ctx({ tried, version: withVersion ? version : undefined }));
    assert.equal(got?.address, want?.address, `seed ${seed} step ${s}`);
  }
}

Deno.test("RoundRobinBalancer matches naive nginx on small pools with random skips, without a version", () => {
  for (let seed = 1; seed <= 60; seed++) {
    compareWithNaive(seed, 1 + (seed % 12), seed % 2 === 0 ? 5 : 1000, 400, false);
  }
});

Deno.test("RoundRobinBalancer matches naive nginx on small pools with random skips, with a version", () => {
  for (let seed = 100; seed <= 160; seed++) compareWithNaive(seed, 1 + (seed % 12), 7, 400, true);
});

Deno.test("RoundRobinBalancer matches naive nginx on a 300-member pool with a version", () => {
  compareWithNaive(7, 300, 4, 3000, true);
  compareWithNaive(8, 300, 1, 3000, true);
});

Deno.test("RoundRobinBalancer equal weights give a plain rotation identical to nginx", () => {
  const ms = manyMembers(500);
  const b = new RoundRobinBalancer(ms);
  const ref = new NaiveRoundRobin(ms);
  for (let i = 0; i < 1200; i++) {
    const got = b.pick(ctx({ version: 0 }))!;
    assert.equal(got, ref.pick(null));
    assert.equal(got, ms[i % 500]);
  }
});

Deno.test("RoundRobinBalancer in a large pool without a version skips members that went down and takes them back", () => {
  const ms = manyMembers(200, (i) => 1 + (i % 3));
  const b = new RoundRobinBalancer(ms);
  for (let i = 0; i < 50; i++) ms[i * 4].up = false;
  const seen = new Set<TestMember>();
  for (let i = 0; i < 2000; i++) {
    const m = b.pick(ctx())!;
    assert.ok(m.up, `picked ${m.address} while down`);
    seen.add(m);
  }
  assert.equal(seen.size, 150);
  for (let i = 0; i < 50; i++) ms[i * 4].up = true;
  seen.clear();
  for (let i = 0; i < 800; i++) seen.add(b.pick(ctx())!);
  assert.equal(seen.size, 200);
});

Deno.test("RoundRobinBalancer asks only the chosen member per pick in a large pool with a version", () => {
  const ms = manyMembers(10_000, (i) => 1 + (i % 5));
  const b = new RoundRobinBalancer(ms);
  b.pick(ctx({ version: 1 }));
  for (const m of ms) m.asked = 0;
  for (let i = 0; i < 100; i++) b.pick(ctx({ version: 1 }));
  const asked = ms.reduce((s, m) => s + m.asked, 0);
  assert.equal(asked, 100);
});

Deno.test("RoundRobinBalancer shares match the weights exactly over one cycle", () => {
  const ms = manyMembers(50, (i) => 1 + (i % 7));
  const total = ms.reduce((s, m) => s + m.weight, 0);
  const b = new RoundRobinBalancer(ms);
  const counts = new Map<TestMember, number>();
  for (let i = 0; i < total * 3; i++) {
    const m = b.pick(ctx())!;
    counts.set(m, (counts.get(m) ?? 0) + 1);
  }
  for (const m of ms) assert.equal(counts.get(m), m.weight * 3);
});

Deno.test("RoundRobinBalancer with a random start continues nginx's sequence from a later point", () => {
  const ms = makeMembers("a:5 b:1 c:1");
  const b = new RoundRobinBalancer(ms, () => 0.5); // 1 pick ahead (floor(0.5 * 3))
  assert.equal(names(b, 7), "a b a c a a a");
});

Deno.test("RoundRobinBalancer invalidate makes a large pool without a version notice a member that went down", () => {
  const ms = manyMembers(100);
  const b = new RoundRobinBalancer(ms);
  const ref = new NaiveRoundRobin(ms);
  for (let i = 0; i < 30; i++) assert.equal(b.pick(ctx()), ref.pick(null));
  ms[60].up = false;
  b.invalidate();
  for (let i = 0; i < 300; i++) assert.equal(b.pick(ctx()), ref.pick(null));
});
