import assert from "node:assert/strict";
import { hash64 } from "../hash64.ts";
import type { Candidate } from "../types.ts";
import { HASH_CACHE_SLOTS, HashBalancer, normalizeClientIp } from "./hash.ts";
import { ctx, makeMembers, manyMembers, seeded, type TestMember } from "./_testing.ts";

/** The definition: highest weight / -ln(u) among eligible members, first on ties. */
function reference(ms: readonly TestMember[], key: string, tried?: ReadonlySet<Candidate>) {
  let best: TestMember | undefined;
  let bestScore = -1;
  for (const m of ms) {
    if (!m.up || tried?.has(m)) continue;
    const score = m.weight / -Math.log(hash64(key, m.address));
    if (score > bestScore) {
      bestScore = score;
      best = m;
    }
  }
  return best;
}

Deno.test("HashBalancer picks the member the rendezvous definition names, equal and mixed weights", () => {
  for (const weight of [() => 1, (i: number) => 1 + ((i * 7) % 13)]) {
    const ms = manyMembers(40, weight);
    const b = new HashBalancer(ms);
    for (let k = 0; k < 3000; k++) {
      const key = `user-${k}`;
      assert.equal(b.pick(ctx({ key })), reference(ms, key), key);
    }
  }
});

Deno.test("HashBalancer gives a key the same member across rebuilds and member order", () => {
  const ms = manyMembers(20, (i) => 1 + (i % 4));
  const a = new HashBalancer(ms);
  const b = new HashBalancer([...ms].reverse());
  for (let k = 0; k < 2000; k++) {
    const key = `k${k}`;
    assert.equal(a.pick(ctx({ key })), b.pick(ctx({ key })));
  }
});

Deno.test("HashBalancer removing a member moves only the keys it had", () => {
  const ms = manyMembers(10, (i) => 1 + (i % 3));
  const before = new HashBalancer(ms);
  const gone = ms[4];
  const after = new HashBalancer(ms.filter((m) => m !== gone));
  let moved = 0;
  for (let k = 0; k < 10_000; k++) {
    const key = `session-${k}`;
    const was = before.pick(ctx({ key }))!;
    const now = after.pick(ctx({ key }))!;
    if (was === gone) {
      moved++;
      assert.notEqual(now, gone);
    } else {
      assert.equal(now, was, key);
    }
  }
  // The removed member had its weighted share (2 of 19) of the keys.
  assert.ok(moved > 800 && moved < 1300, `moved ${moved}`);
});

Deno.test("HashBalancer shares of keys follow the weights", () => {
  const ms = makeMembers("a:1 b:2 c:3 d:4");
  const b = new HashBalancer(ms);
  const counts: Record<string, number> = { a: 0, b: 0, c: 0, d: 0 };
  const keys = 40_000;
  for (let k = 0; k < keys; k++) counts[b.pick(ctx({ key: `client-${k}` }))!.address]++;
  for (const [name, w] of [["a", 1], ["b", 2], ["c", 3], ["d", 4]] as const) {
    const share = counts[name] / keys;
    assert.ok(Math.abs(share - w / 10) < 0.012, `${name}: ${share}`);
  }
});

Deno.test("HashBalancer equal weights spread keys evenly", () => {
  const ms = manyMembers(8);
  const b = new HashBalancer(ms);
  const counts = new Map<Candidate, number>();
  for (let k = 0; k < 40_000; k++) {
    const m = b.pick(ctx({ key: `${k}` }))!;
    counts.set(m, (counts.get(m) ?? 0) + 1);
  }
  for (const m of ms) {
    const c = counts.get(m) ?? 0;
    assert.ok(c > 4600 && c < 5400, `${m.address}: ${c}`);
  }
});

for (const mode of ["with a version", "without a version"] as const) {
  Deno.test(`HashBalancer moves keys off an unavailable member and back when it returns, ${mode}`, () => {
    const ms = manyMembers(100, (i) => 1 + (i % 2));
    const b = new HashBalancer(ms);
    let version = 0;
    const v = () => (mode === "with a version" ? version : undefined);
    const keys = Array.from({ length: 3000 }, (_, k) => `k${k}`);
    const first = keys.map((key) => b.pick(ctx({ key, version: v() }))!);
    const victim = first[0];
    victim.up = false;
    version++;
    for (let k = 0; k < keys.length; k++) {
      const got = b.pick(ctx({ key: keys[k], version: v() }))!;
      assert.notEqual(got, victim);
      assert.equal(got, reference(ms, keys[k]));
      if (first[k] !== victim) assert.equal(got, first[k]);
    }
    victim.up = true;
    version++;
    for (let k = 0; k < keys.length; k++) {
      assert.equal(b.pick(ctx({ key: keys[k], version: v() })), first[k]);
    }
  });
}

Deno.test("HashBalancer excludes tried members without caching that choice", () => {
  const ms = manyMembers(5);
  const b = new HashBalancer(ms);
  const key = "abc";
  const winner = b.pick(ctx({ key }))!;
  const tried = new Set<Candidate>([winner]);
  const second = b.pick(ctx({ key, tried }))!;
  assert.notEqual(second, winner);
  assert.equal(second, reference(ms, key, tried));
  assert.equal(b.pick(ctx({ key })), winner);
  assert.equal(b.pick(ctx({ key, tried: new Set(ms) })), undefined);
});

Deno.test("HashBalancer goes round robin without a key", () => {
  const b = new HashBalancer(makeMembers("a:5 b:1 c:1"));
  const seq: string[] = [];
  for (let i = 0; i < 7; i++) seq.push(b.pick(ctx({ key: i % 2 === 0 ? undefined : "" }))!.address);
  assert.equal(seq.join(" "), "a a b a c a a");
});

Deno.test("HashBalancer answers a cached key without asking other members", () => {
  const ms = manyMembers(10_000, (i) => 1 + (i % 3));
  const b = new HashBalancer(ms);
  const m = b.pick(ctx({ key: "hot", version: 1 }))!;
  for (const x of ms) x.asked = 0;
  for (let i = 0; i < 50; i++) assert.equal(b.pick(ctx({ key: "hot", version: 1 })), m);
  assert.equal(m.asked, 50);
  assert.equal(ms.reduce((s, x) => s + x.asked, 0), 50);
});

Deno.test("HashBalancer keeps answering correctly when keys collide in the cache", () => {
  const ms = manyMembers(30);
  const b = new HashBalancer(ms);
  const rnd = seeded(4);
  for (let i = 0; i < HASH_CACHE_SLOTS * 3; i++) {
    const key = `c${Math.floor(rnd() * HASH_CACHE_SLOTS * 2)}`;
    assert.equal(b.pick(ctx({ key, version: 0 })), reference(ms, key));
  }
});

Deno.test("HashBalancer invalidate drops cached choices", () => {
  const ms = manyMembers(100);
  const b = new HashBalancer(ms);
  const m = b.pick(ctx({ key: "x", version: 3 }))!;
  m.up = false;
  const other = b.pick(ctx({ key: "x", version: 3 }))!; // found down when checked
  assert.notEqual(other, m);
  m.up = true; // returned without a version change: only invalidate() tells
  b.invalidate();
  assert.equal(b.pick(ctx({ key: "x", version: 3 })), m);
});

Deno.test("HashBalancer returns undefined for an empty pool or all members unavailable", () => {
  assert.equal(new HashBalancer<TestMember>([]).pick(ctx({ key: "a" })), undefined);
  const ms = makeMembers("a b");
  const b = new HashBalancer(ms);
  ms[0].up = false;
  ms[1].up = false;
  assert.equal(b.pick(ctx({ key: "a" })), undefined);
  assert.equal(b.pick(ctx({ key: undefined })), undefined);
});

Deno.test("normalizeClientIp maps IPv4-mapped IPv6 addresses to IPv4", () => {
  assert.equal(normalizeClientIp("::ffff:1.2.3.4"), "1.2.3.4");
  assert.equal(normalizeClientIp("::FFFF:10.0.0.1"), "10.0.0.1");
  assert.equal(normalizeClientIp("::ffff:102:304"), "1.2.3.4");
  assert.equal(normalizeClientIp("0:0:0:0:0:ffff:c0a8:0101"), "192.168.1.1");
  assert.equal(normalizeClientIp("0:0::ffff:1.2.3.4"), "1.2.3.4");
  assert.equal(normalizeClientIp("1.2.3.4"), "1.2.3.4");
  assert.equal(normalizeClientIp("::1"), "::1");
  assert.equal(normalizeClientIp("2001:db8::ffff:1.2.3.4"), "2001:db8::ffff:1.2.3.4");
  assert.equal(normalizeClientIp("::ffff:0:1.2.3.4"), "::ffff:0:1.2.3.4");
  assert.equal(normalizeClientIp("::fffe:1.2.3.4"), "::fffe:1.2.3.4");
  assert.equal(normalizeClientIp("fe80::1%eth0"), "fe80::1%eth0");
  assert.equal(normalizeClientIp("::ffff:999.1.1.1"), "::ffff:999.1.1.1");
  const ms = manyMembers(10);
  const b = new HashBalancer(ms);
  assert.equal(
    b.pick(ctx({ key: normalizeClientIp("::ffff:203.0.113.9") })),
    b.pick(ctx({ key: normalizeClientIp("203.0.113.9") })),
  );
});
