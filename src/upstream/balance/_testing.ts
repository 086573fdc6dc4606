/**
 * Test helpers for the balancers: a simple member, a context builder, a seeded random, and
 * naive reference implementations of nginx's round robin and least_conn to compare against.
 */

import type { Candidate, PickContext } from "../types.ts";
export { seeded } from "../../base/random.ts";

/** A member whose availability and load tests set directly. */
export class TestMember implements Candidate {
  inflight = 0;
  up = true;
  /** Counts `available` calls, to prove a policy does not ask every member per pick. */
  asked = 0;
  constructor(readonly address: string, readonly weight = 1) {}
  available(_now: number): boolean {
    this.asked++;
    return this.up;
  }
}

/** Members from `"a:5 b:1 c"` (weight after the colon, default 1). */
export function makeMembers(spec: string): TestMember[] {
  return spec.split(/\s+/).filter((s) => s !== "").map((s) => {
    const [name, w] = s.split(":");
    return new TestMember(name, w === undefined ? 1 : Number(w));
  });
}

/** `n` members named `m0`.. with weights from `weight(i)`. */
export function manyMembers(n: number, weight: (i: number) => number = () => 1): TestMember[] {
  const out: TestMember[] = [];
  for (let i = 0; i < n; i++) {
    out.push(new TestMember(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}:8080`, weight(i)));
  }
  return out;
}

/** A pick context. */
export function ctx(
  opts: { now?: number; key?: string; tried?: ReadonlySet<Candidate> | null; version?: number } =
    {},
): PickContext {
  return {
    now: opts.now ?? 1000,
    key: opts.key,
    tried: opts.tried ?? null,
    healthVersion: opts.version,
  };
}

/** nginx smooth weighted round robin, the plain O(n) way. */
export class NaiveRoundRobin {
  readonly current: number[];
  constructor(readonly members: readonly TestMember[]) {
    this.current = members.map(() => 0);
  }
  pick(tried: ReadonlySet<Candidate> | null): TestMember | undefined {
    let best = -1;
    let total = 0;
    for (let i = 0; i < this.members.length; i++) {
      const m = this.members[i];
      if (!m.up || (tried !== null && tried.has(m))) continue;
      this.current[i] += m.weight;
      total += m.weight;
      if (best < 0 || this.current[i] > this.current[best]) best = i;
    }
    if (best < 0) return undefined;
    this.current[best] -= total;
    return this.members[best];
  }
}

/** nginx least_conn, the plain O(n) way: lowest inflight/weight, ties by smooth round robin. */
export class NaiveLeastConn {
  readonly current: number[];
  constructor(readonly members: readonly TestMember[]) {
    this.current = members.map(() => 0);
  }
  pick(tried: ReadonlySet<Candidate> | null): TestMember | undefined {
    const ms = this.members;
    const ok = (m: TestMember) => m.up && (tried === null || !tried.has(m));
    let first = -1;
    for (let i = 0; i < ms.length; i++) {
      if (!ok(ms[i])) continue;
      if (first < 0 || ms[i].inflight * ms[first].weight < ms[first].inflight * ms[i].weight) {
        first = i;
      }
    }
    if (first < 0) return undefined;
    const tied = (m: TestMember) => m.inflight * ms[first].weight === ms[first].inflight * m.weight;
    let best = -1;
    let total = 0;
    for (let i = first; i < ms.length; i++) {
      const m = ms[i];
      if (!ok(m) || !tied(m)) continue;
      this.current[i] += m.weight;
      total += m.weight;
      if (best < 0 || this.current[i] > this.current[best]) best = i;
    }
    this.current[best] -= total;
    return ms[best];
  }
}

/** Counts of each member's address in `picks`. */
export function tally(picks: readonly (Candidate | undefined)[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of picks) {
    const k = p === undefined ? "-" : p.address;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}
