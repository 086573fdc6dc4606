/**
 * `round_robin`: smooth weighted round robin, the nginx algorithm. Weights 5, 1, 1 give
 * `a a b a c a a`, repeating. Unavailable and tried members are skipped and gain nothing.
 *
 * The sequence is exactly nginx's, in O(distinct weights + log n) per pick (see `_swrr.ts`),
 * whenever availability is current: with `ctx.healthVersion`, or in pools of up to 64 members.
 * In larger pools picked without a version, a member that became unavailable is noticed only
 * when it would win; until then it keeps gaining, so after its return it comes up somewhat
 * sooner than under nginx. Shares stay within one pick of the weights either way.
 */

import type { Random } from "../../base/mod.ts";
import type { Balancer, Candidate, PickContext } from "../types.ts";
import { AvailabilitySync } from "./_availability.ts";
import { SwrrCore } from "./_swrr.ts";

/** Smooth weighted round robin over a fixed member list. */
export class RoundRobinBalancer<M extends Candidate> implements Balancer<M> {
  readonly #members: readonly M[];
  readonly #core: SwrrCore;
  readonly #avail: AvailabilitySync;
  readonly #index: Map<Candidate, number>;
  readonly #tried: number[] = [];

  /**
   * `random`, when given, starts the sequence at a random point (as if up to n picks had
   * happened with every member available), so that instances and rebuilt pools do not all
   * begin with the first member; without it the sequence starts like nginx's.
   */
  constructor(members: readonly M[], random?: Random) {
    this.#members = members;
    const n = members.length;
    this.#index = new Map(members.map((m, i) => [m, i]));
    const core = new SwrrCore(members.map((m) => m.weight));
    this.#core = core;
    this.#avail = new AvailabilitySync(n, core);
    for (let i = 0; i < n; i++) core.insert(i);
    if (random !== undefined) core.skipRandom(random);
  }

  /** The next member in the smooth weighted sequence, or undefined when none is eligible. */
  pick(ctx: PickContext): M | undefined {
    const members = this.#members;
    if (members.length === 0) return undefined;
    const core = this.#core;
    const avail = this.#avail;
    avail.sync(members, ctx);
    const tried = this.#tried;
    if (ctx.tried !== null && ctx.tried.size > 0) core.takeOut(ctx.tried, this.#index, tried);
    let c = core.peek();
    while (c >= 0 && !members[c].available(ctx.now)) {
      avail.setDown(c);
      c = core.peek();
    }
    if (c >= 0) core.commit(c);
    for (let k = 0; k < tried.length; k++) core.insert(tried[k]);
    tried.length = 0;
    return c < 0 ? undefined : members[c];
  }

  /** Round robin ignores in-flight counts. */
  inflightChanged(_member: M): void {}

  /** Re-reads every member's availability at the next pick. */
  invalidate(): void {
    this.#avail.invalidate();
  }
}
