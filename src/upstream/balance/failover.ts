/**
 * `failover`: strict member order. The first available, untried member takes every request;
 * the others are backups in order. Weights are ignored.
 */

import type { Balancer, Candidate, PickContext } from "../types.ts";
import { type AvailabilitySink, AvailabilitySync } from "./_availability.ts";

/** Tracks the lowest index not known to be down, so a pick starts there. */
class FirstUp implements AvailabilitySink {
  first = 0;
  down: Uint8Array | undefined;
  constructor(readonly n: number) {}
  markDown(i: number): void {
    if (i !== this.first) return;
    const down = this.down!;
    let f = i + 1;
    while (f < this.n && down[f] === 1) f++;
    this.first = f;
  }
  markUp(i: number): void {
    if (i < this.first) this.first = i;
  }
}

/** The first available, untried member in list order. */
export class FailoverBalancer<M extends Candidate> implements Balancer<M> {
  readonly #members: readonly M[];
  readonly #first: FirstUp;
  readonly #avail: AvailabilitySync;

  constructor(members: readonly M[]) {
    this.#members = members;
    this.#first = new FirstUp(members.length);
    this.#avail = new AvailabilitySync(members.length, this.#first);
    this.#first.down = this.#avail.down;
  }

  /** The preferred member still eligible, or undefined when none is. */
  pick(ctx: PickContext): M | undefined {
    const members = this.#members;
    const n = members.length;
    if (n === 0) return undefined;
    const avail = this.#avail;
    avail.sync(members, ctx);
    const down = avail.down;
    const tried = ctx.tried !== null && ctx.tried.size > 0 ? ctx.tried : null;
    for (let i = this.#first.first; i < n; i++) {
      if (down[i] === 1) continue;
      const m = members[i];
      if (tried !== null && tried.has(m)) continue;
      if (m.available(ctx.now)) return m;
      avail.setDown(i);
    }
    return undefined;
  }

  /** Failover ignores in-flight counts. */
  inflightChanged(_member: M): void {}

  /** Re-reads every member's availability at the next pick. */
  invalidate(): void {
    this.#avail.invalidate();
  }
}
