/** Milliseconds; `Date.now()` in production, a settable value in tests. */
export interface Clock {
  now(): number;
}

/** The wall clock in milliseconds. */
export const systemClock: Clock = { now: Date.now };

/** A clock for tests: time moves only when told to. */
export class ManualClock implements Clock {
  constructor(public t = 1_000_000) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}
