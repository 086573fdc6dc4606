/** One suite run against every balancing policy, with and without an availability version. */

import assert from "node:assert/strict";
import type { PoolConfig } from "../../config/types.ts";
import type { Candidate, PickContext } from "../types.ts";
import { createBalancer } from "./index.ts";
import { makeMembers, manyMembers, seeded, type TestMember } from "./_testing.ts";

const KINDS: PoolConfig["balance"][] = ["round_robin", "least_conn", "hash", "failover"];
const MODES = ["version", "no version"] as const;

/** Contexts for one suite: a changing key (so hash spreads) and the mode's version. */
class Picker {
  version = 0;
  n = 0;
  constructor(readonly mode: (typeof MODES)[number]) {}
  ctx(tried: ReadonlySet<Candidate> | null = null): PickContext {
    return {
      now: 1000,
      key: `key-${this.n++}`,
      tried,
      healthVersion: this.mode === "version" ? this.version : undefined,
    };
  }
}

for (const kind of KINDS) {
  for (const mode of MODES) {
    const name = (what: string) => `${kind} (${mode}) ${what}`;

    Deno.test(name("returns undefined for an empty pool"), () => {
      const b = createBalancer<TestMember>(kind, []);
      assert.equal(b.pick(new Picker(mode).ctx()), undefined);
    });

    Deno.test(name("always returns the single member, or undefined when it is unavailable"), () => {
      const ms = makeMembers("only:3");
      const b = createBalancer(kind, ms);
      const p = new Picker(mode);
      for (let i = 0; i < 5; i++) assert.equal(b.pick(p.ctx()), ms[0]);
      ms[0].up = false;
      p.version++;
      assert.equal(b.pick(p.ctx()), undefined);
      assert.equal(b.pick(p.ctx(new Set([ms[0]]))), undefined);
      ms[0].up = true;
      p.version++;
      assert.equal(b.pick(p.ctx()), ms[0]);
    });

    for (const size of [6, 120]) {
      Deno.test(name(`skips unavailable members and takes them back (${size} members)`), () => {
        const rnd = seeded(size);
        const ms = manyMembers(size, (i) => 1 + (i % 4));
        const b = createBalancer(kind, ms);
        const p = new Picker(mode);
        for (let round = 0; round < 30; round++) {
          for (const m of ms) m.up = rnd() < 0.6;
          p.version++;
          const upCount = ms.filter((m) => m.up).length;
          for (let i = 0; i < 40; i++) {
            const got = b.pick(p.ctx());
            if (upCount === 0) assert.equal(got, undefined);
            else assert.ok(got !== undefined && got.up, `round ${round}: ${got?.address}`);
          }
        }
        for (const m of ms) m.up = true;
        p.version++;
        const seen = new Set<Candidate>();
        for (let i = 0; i < 60 * size; i++) seen.add(b.pick(p.ctx())!);
        assert.equal(seen.size, kind === "failover" ? 1 : size);
      });

      Deno.test(name(`never returns a tried member (${size} members)`), () => {
        const rnd = seeded(size + 1);
        const ms = manyMembers(size, (i) => 1 + (i % 3));
        const b = createBalancer(kind, ms);
        const p = new Picker(mode);
        for (let i = 0; i < 500; i++) {
          const tried = new Set<Candidate>();
          for (let k = Math.floor(rnd() * 4); k >= 0; k--) tried.add(ms[Math.floor(rnd() * size)]);
          const got = b.pick(p.ctx(tried));
          assert.ok(got !== undefined && !tried.has(got));
        }
        assert.equal(b.pick(p.ctx(new Set(ms))), undefined);
      });
    }

    Deno.test(name("returns undefined when every member is unavailable"), () => {
      const ms = manyMembers(80);
      const b = createBalancer(kind, ms);
      const p = new Picker(mode);
      b.pick(p.ctx());
      for (const m of ms) m.up = false;
      p.version++;
      for (let i = 0; i < 5; i++) assert.equal(b.pick(p.ctx()), undefined);
    });

    Deno.test(name("honours weights over many picks"), () => {
      const ms = makeMembers("a:5 b:1 c:3 d:1");
      const b = createBalancer(kind, ms);
      const p = new Picker(mode);
      const picks = 10_000;
      const counts: Record<string, number> = { a: 0, b: 0, c: 0, d: 0 };
      for (let i = 0; i < picks; i++) counts[b.pick(p.ctx())!.address]++;
      if (kind === "failover") {
        assert.deepEqual(counts, { a: picks, b: 0, c: 0, d: 0 });
      } else if (kind === "hash") {
        for (const m of ms) {
          const share = counts[m.address] / picks;
          assert.ok(Math.abs(share - m.weight / 10) < 0.02, `${m.address}: ${share}`);
        }
      } else {
        // Round robin, and least_conn with no load (all tied), are exact per cycle of 10.
        assert.deepEqual(counts, { a: 5000, b: 1000, c: 3000, d: 1000 });
      }
    });
  }
}
