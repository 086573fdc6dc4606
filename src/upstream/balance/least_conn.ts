/**
 * `least_conn`: the member with the fewest requests in flight divided by its weight; ties go
 * round robin, as nginx does it: smooth weighted round robin among the tied members only (the
 * others neither gain nor count), so with no load the weights still decide.
 *
 * Members sit in buckets by in-flight/weight and only the lowest bucket picks (see
 * `_swrr.ts`), O(distinct weights + log n) per pick. The balancer learns counts in three ways:
 * `inflightChanged(member)` (exact; call it on every change), a check of the member about to be
 * chosen, and a re-read of 32 members per pick in turn. Pools of up to 32 members are therefore
 * exact without notifications; larger ones without them see a finished request within
 * n / 32 picks. Availability is handled as in round robin.
 */

import type { Random } from "../../base/mod.ts";
import type { Balancer, Candidate, PickContext } from "../types.ts";
import { AvailabilitySync } from "./_availability.ts";
import { SwrrCore } from "./_swrr.ts";

/** Members whose in-flight count is re-read at each pick, in turn. */
export const REFRESH_PER_PICK = 32;

/** Fewest in-flight requests per weight, ties by smooth weighted round robin. */
export class LeastConnBalancer<M extends Candidate> implements Balancer<M> {
  readonly #members: readonly M[];
  readonly #core: SwrrCore;
  readonly #avail: AvailabilitySync;
  readonly #index: Map<Candidate, number>;
  readonly #inflight: Float64Array;
  readonly #tried: number[] = [];
  #cursor = 0;

  /** `random`, when given, starts the tie-breaking sequence at a random point. */
  constructor(members: readonly M[], random?: Random) {
    this.#members = members;
    const n = members.length;
    this.#index = new Map(members.map((m, i) => [m, i]));
    this.#inflight = new Float64Array(n);
    const core = new SwrrCore(members.map((m) => m.weight));
    this.#core = core;
    this.#avail = new AvailabilitySync(n, core);
    for (let i = 0; i < n; i++) {
      const f = members[i].inflight;
      this.#inflight[i] = f;
      core.key[i] = f / core.w[i];
      core.insert(i);
    }
    if (random !== undefined) core.skipRandom(random);
  }

  /** The least loaded eligible member, or undefined when none is eligible. */
  pick(ctx: PickContext): M | undefined {
    const members = this.#members;
    const n = members.length;
    if (n === 0) return undefined;
    const core = this.#core;
    const avail = this.#avail;
    avail.sync(members, ctx);
    this.#refresh(n);
    const tried = this.#tried;
    if (ctx.tried !== null && ctx.tried.size > 0) core.takeOut(ctx.tried, this.#index, tried);
    const inflight = this.#inflight;
    let c: number;
    for (;;) {
      c = core.peek();
      if (c < 0) break;
      const m = members[c];
      if (!m.available(ctx.now)) {
        avail.setDown(c);
        continue;
      }
      const f = m.inflight;
      if (f !== inflight[c]) {
        this.#setInflight(c, f);
        continue;
      }
      core.commit(c);
      break;
    }
    for (let k = 0; k < tried.length; k++) core.insert(tried[k]);
    tried.length = 0;
    return c < 0 ? undefined : members[c];
  }

  /** Moves `member` to the bucket of its new in-flight count; unknown members are ignored. */
  inflightChanged(member: M): void {
    const i = this.#index.get(member);
    if (i !== undefined) this.#setInflight(i, member.inflight);
  }

  /** Re-reads every member's availability at the next pick. */
  invalidate(): void {
    this.#avail.invalidate();
  }

  #setInflight(i: number, f: number): void {
    if (this.#inflight[i] === f) return;
    this.#inflight[i] = f;
    const core = this.#core;
    core.key[i] = f / core.w[i];
    if (core.inside[i] === 1) {
      core.remove(i);
      core.insert(i);
    }
  }

  #refresh(n: number): void {
    const members = this.#members;
    const inflight = this.#inflight;
    let j = this.#cursor;
    for (let k = n < REFRESH_PER_PICK ? n : REFRESH_PER_PICK; k > 0; k--) {
      const f = members[j].inflight;
      if (f !== inflight[j]) this.#setInflight(j, f);
      if (++j === n) j = 0;
    }
    this.#cursor = j;
  }
}
