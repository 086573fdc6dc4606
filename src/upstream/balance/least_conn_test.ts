import assert from "node:assert/strict";
import type { Candidate } from "../types.ts";
import { LeastConnBalancer } from "./least_conn.ts";
import {
  ctx,
  makeMembers,
  manyMembers,
  NaiveLeastConn,
  seeded,
  type TestMember,
} from "./_testing.ts";

Deno.test("LeastConnBalancer picks the fewest in-flight requests divided by weight", () => {
  const ms = makeMembers("a:1 b:2 c:4");
  ms[0].inflight = 2; // 2
  ms[1].inflight = 3; // 1.5
  ms[2].inflight = 7; // 1.75
  const b = new LeastConnBalancer(ms);
  assert.equal(b.pick(ctx())!.address, "b");
  ms[1].inflight = 4; // 2: a and b tie at 2, c is lowest
  b.inflightChanged(ms[1]);
  assert.equal(b.pick(ctx())!.address, "c");
});

Deno.test("LeastConnBalancer breaks ties by smooth weighted round robin (a a b a c a a)", () => {
  const b = new LeastConnBalancer(makeMembers("a:5 b:1 c:1"));
  const seq: string[] = [];
  for (let i = 0; i < 14; i++) seq.push(b.pick(ctx())!.address);
  assert.equal(seq.join(" "), "a a b a c a a a a b a c a a");
});

Deno.test("LeastConnBalancer rotates among the tied members only", () => {
  const ms = makeMembers("a b c d");
  ms[1].inflight = 1;
  const b = new LeastConnBalancer(ms);
  const seq: string[] = [];
  for (let i = 0; i < 6; i++) seq.push(b.pick(ctx())!.address);
  assert.equal(seq.join(" "), "a c d a c d");
});

Deno.test("LeastConnBalancer sees load changes without notifications in small pools", () => {
  const ms = makeMembers("a b c");
  const b = new LeastConnBalancer(ms);
  ms[0].inflight = 5;
  ms[1].inflight = 5;
  assert.equal(b.pick(ctx())!.address, "c");
  ms[2].inflight = 9;
  ms[0].inflight = 0;
  assert.equal(b.pick(ctx())!.address, "a");
});

/** Random load, availability and tried sets; every pick must equal nginx's least_conn. */
function compareWithNaive(
  seed: number,
  n: number,
  maxWeight: number,
  steps: number,
  opts: { notify: boolean; version: boolean },
): void {
  const rnd = seeded(seed);
  const ms = manyMembers(n, () => 1 + Math.floor(rnd() * maxWeight));
  const b = new LeastConnBalancer(ms);
  const ref = new NaiveLeastConn(ms);
  const busy: TestMember[] = [];
  let version = 0;
  for (let s = 0; s < steps; s++) {
    if (rnd() < 0.1) {
      const m = ms[Math.floor(rnd() * n)];
      m.up = !m.up;
      version++;
    }
    // Requests finish in random order.
    while (busy.length > 0 && rnd() < 0.45) {
      const k = Math.floor(rnd() * busy.length);
      const m = busy[k];
      busy[k] = busy[busy.length - 1];
      busy.pop();
      m.inflight--;
      if (opts.notify) b.inflightChanged(m);
    }
    let tried: Set<Candidate> | null = null;
    if (rnd() < 0.2) tried = new Set([ms[Math.floor(rnd() * n)], ms[Math.floor(rnd() * n)]]);
    const want = ref.pick(tried);
    const got = b.pick(ctx({ tried, version: opts.version ? version : undefined }));
    assert.equal(got?.address, want?.address, `seed ${seed} step ${s}`);
    if (got !== undefined) {
      got.inflight++;
      busy.push(got);
      if (opts.notify) b.inflightChanged(got);
    }
  }
}

Deno.test("LeastConnBalancer matches naive nginx least_conn on small pools without notifications", () => {
  for (let seed = 1; seed <= 60; seed++) {
    compareWithNaive(seed, 1 + (seed % 12), seed % 2 === 0 ? 4 : 300, 400, {
      notify: false,
      version: false,
    });
  }
});

Deno.test("LeastConnBalancer matches naive nginx least_conn on small pools with notifications and a version", () => {
  for (let seed = 100; seed <= 160; seed++) {
    compareWithNaive(seed, 1 + (seed % 12), 3, 400, { notify: true, version: true });
  }
});

Deno.test("LeastConnBalancer matches naive nginx least_conn on a 300-member pool with notifications", () => {
  compareWithNaive(5, 300, 3, 4000, { notify: true, version: true });
  compareWithNaive(6, 300, 1, 4000, { notify: true, version: true });
});

Deno.test("LeastConnBalancer in a large pool without notifications sees a finished request within n/32 picks", () => {
  const ms = manyMembers(320);
  for (const m of ms) m.inflight = 3;
  const b = new LeastConnBalancer(ms);
  const quiet = ms[200];
  quiet.inflight = 0;
  let at = -1;
  for (let i = 0; i < 20; i++) {
    const m = b.pick(ctx({ version: 0 }))!;
    if (m === quiet) {
      at = i;
      break;
    }
    m.inflight++;
  }
  assert.ok(at >= 0 && at <= 10, `found after ${at} picks`);
});

Deno.test("LeastConnBalancer checks the load of the member it is about to choose", () => {
  const ms = manyMembers(1000);
  const b = new LeastConnBalancer(ms);
  // No load: the tie rotation goes through the members in order.
  for (let i = 0; i < 500; i++) assert.equal(b.pick(ctx({ version: 0 })), ms[i]);
  // Member 500 got busy without a notification, outside this pick's re-read window (0..31).
  ms[500].inflight = 5;
  assert.equal(b.pick(ctx({ version: 0 })), ms[501]);
  assert.equal(b.pick(ctx({ version: 0 })), ms[502]);
});

Deno.test("LeastConnBalancer honours weights under load", () => {
  const rnd = seeded(11);
  const ms = makeMembers("a:1 b:2 c:3 d:4");
  const b = new LeastConnBalancer(ms);
  const busy: TestMember[] = [];
  const counts: Record<string, number> = { a: 0, b: 0, c: 0, d: 0 };
  for (let i = 0; i < 20_000; i++) {
    while (busy.length > 0 && rnd() < 0.5) {
      const k = Math.floor(rnd() * busy.length);
      busy[k].inflight--;
      b.inflightChanged(busy[k]);
      busy[k] = busy[busy.length - 1];
      busy.pop();
    }
    const m = b.pick(ctx())!;
    counts[m.address]++;
    m.inflight++;
    b.inflightChanged(m);
    busy.push(m);
  }
  for (const [name, w] of [["a", 1], ["b", 2], ["c", 3], ["d", 4]] as const) {
    const share = counts[name] / 20_000;
    assert.ok(Math.abs(share - w / 10) < 0.03, `${name}: ${share}`);
  }
});

Deno.test("LeastConnBalancer ignores notifications about members it does not hold", () => {
  const ms = makeMembers("a b");
  const b = new LeastConnBalancer(ms);
  b.inflightChanged(makeMembers("x")[0]);
  assert.equal(b.pick(ctx())!.address, "a");
});

Deno.test("LeastConnBalancer matches naive nginx least_conn with many distinct load ratios", () => {
  // Weights up to 50 and long-running requests: more distinct ratios than the 64 empty buckets
  // the core keeps, so buckets are dropped and made again.
  const rnd = seeded(21);
  const ms = manyMembers(40, () => 1 + Math.floor(rnd() * 50));
  const b = new LeastConnBalancer(ms);
  const ref = new NaiveLeastConn(ms);
  const busy: TestMember[] = [];
  const ratios = new Set<number>();
  for (let s = 0; s < 6000; s++) {
    while (busy.length > 200 || (busy.length > 0 && rnd() < 0.3)) {
      const k = Math.floor(rnd() * busy.length);
      const m = busy[k];
      busy[k] = busy[busy.length - 1];
      busy.pop();
      m.inflight--;
      b.inflightChanged(m);
    }
    const want = ref.pick(null)!;
    const got = b.pick(ctx({ version: 0 }))!;
    assert.equal(got, want, `step ${s}`);
    got.inflight++;
    b.inflightChanged(got);
    busy.push(got);
    for (const m of ms) ratios.add(m.inflight / m.weight);
  }
  assert.ok(ratios.size > 100, `${ratios.size} ratios`);
});
