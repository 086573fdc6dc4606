/**
 * Which members a balancer believes unavailable, kept current per pick without asking every
 * member every time: with a `healthVersion` all members are re-read only when it changes;
 * without one, small pools are re-read at every pick and large pools poll only the members
 * known to be down (a member that goes down is then noticed when a policy is about to choose
 * it, which every policy checks).
 */

import type { Candidate, PickContext } from "../types.ts";

/** Pools up to this size re-read every member's availability at each pick without a version. */
export const FULL_SCAN_LIMIT = 64;

/** Receives the transitions that `AvailabilitySync` finds. */
export interface AvailabilitySink {
  markDown(i: number): void;
  markUp(i: number): void;
}

/** The known-down set of one member list, by index. */
export class AvailabilitySync {
  /** 1 while member i is known to be unavailable. */
  readonly down: Uint8Array;
  readonly #list: Int32Array;
  readonly #pos: Int32Array;
  #count = 0;
  #version = NaN;
  #force = true;

  constructor(readonly n: number, readonly sink: AvailabilitySink) {
    this.down = new Uint8Array(n);
    this.#list = new Int32Array(n);
    this.#pos = new Int32Array(n);
  }

  /** Members currently known to be down. */
  get downCount(): number {
    return this.#count;
  }

  /** Makes the next `sync` re-read every member. */
  invalidate(): void {
    this.#force = true;
  }

  /** Brings `down` up to date for a pick at `ctx.now`, reporting transitions to the sink. */
  sync(members: readonly Candidate[], ctx: PickContext): void {
    const v = ctx.healthVersion;
    if (this.#force) {
      this.#force = false;
      this.#version = v === undefined ? NaN : v;
      this.#scanAll(members, ctx.now);
    } else if (v !== undefined) {
      if (v !== this.#version) {
        this.#version = v;
        this.#scanAll(members, ctx.now);
      }
    } else {
      this.#version = NaN;
      if (this.n <= FULL_SCAN_LIMIT) this.#scanAll(members, ctx.now);
      else if (this.#count > 0) this.#pollDown(members, ctx.now);
    }
  }

  /** Records that member i was found unavailable (for example just before being chosen). */
  setDown(i: number): void {
    if (this.down[i] === 1) return;
    this.down[i] = 1;
    this.#pos[i] = this.#count;
    this.#list[this.#count++] = i;
    this.sink.markDown(i);
  }

  /** Records that member i was found available again. */
  setUp(i: number): void {
    if (this.down[i] === 0) return;
    this.down[i] = 0;
    const p = this.#pos[i];
    const last = this.#list[--this.#count];
    this.#list[p] = last;
    this.#pos[last] = p;
    this.sink.markUp(i);
  }

  #scanAll(members: readonly Candidate[], now: number): void {
    const down = this.down;
    for (let i = 0; i < this.n; i++) {
      if (members[i].available(now)) {
        if (down[i] === 1) this.setUp(i);
      } else if (down[i] === 0) {
        this.setDown(i);
      }
    }
  }

  #pollDown(members: readonly Candidate[], now: number): void {
    // Backwards: setUp moves the last entry into the freed slot, which was already visited.
    for (let k = this.#count - 1; k >= 0; k--) {
      const i = this.#list[k];
      if (members[i].available(now)) this.setUp(i);
    }
  }
}
