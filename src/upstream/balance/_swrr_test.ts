import assert from "node:assert/strict";
import { SwrrCore } from "./_swrr.ts";
import { seeded } from "./_testing.ts";

/** nginx over plain arrays, every member eligible. */
function naive(weights: number[], picks: number): number[] {
  const cur = weights.map(() => 0);
  const total = weights.reduce((a, b) => a + b, 0);
  const out: number[] = [];
  for (let p = 0; p < picks; p++) {
    let best = 0;
    for (let i = 0; i < weights.length; i++) {
      cur[i] += weights[i];
      if (cur[i] > cur[best]) best = i;
    }
    cur[best] -= total;
    out.push(best);
  }
  return out;
}

Deno.test("SwrrCore keeps nginx's sequence across rebases of its step counter", () => {
  const rnd = seeded(3);
  const weights = Array.from({ length: 9 }, () => 1 + Math.floor(rnd() * 9));
  const core = new SwrrCore(weights, 5);
  for (let i = 0; i < weights.length; i++) core.insert(i);
  const got: number[] = [];
  for (let p = 0; p < 500; p++) {
    const c = core.peek();
    core.commit(c);
    got.push(c);
  }
  assert.deepEqual(got, naive(weights, 500));
});

Deno.test("SwrrCore keeps a removed member's current frozen until it returns", () => {
  const core = new SwrrCore([5, 1, 1]);
  for (let i = 0; i < 3; i++) core.insert(i);
  core.commit(core.peek()); // a: 5 - 7 = -2
  assert.equal(core.current(0), -2);
  core.remove(0);
  core.commit(core.peek()); // b wins among b, c; a frozen
  core.commit(core.peek());
  assert.equal(core.current(0), -2);
  core.insert(0);
  assert.equal(core.current(0), -2);
  assert.equal(core.peek(), 0);
});

Deno.test("SwrrCore picks only from the lowest bucket and returns -1 when empty", () => {
  const core = new SwrrCore([1, 1, 1]);
  assert.equal(core.peek(), -1);
  core.key[0] = 2;
  core.key[1] = 1;
  core.key[2] = 1;
  for (let i = 0; i < 3; i++) core.insert(i);
  const seq: number[] = [];
  for (let p = 0; p < 4; p++) {
    const c = core.peek();
    core.commit(c);
    seq.push(c);
  }
  assert.deepEqual(seq, [1, 2, 1, 2]);
  core.remove(1);
  core.remove(2);
  assert.equal(core.peek(), 0);
  core.remove(0);
  assert.equal(core.peek(), -1);
});
