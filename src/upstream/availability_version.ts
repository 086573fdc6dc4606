/**
 * The number to pass as `PickContext.healthVersion`: it changes whenever any member's
 * availability may have changed, including when a cooldown ends by itself, which no event
 * reports. Call `bump()` on every flip (ejection, restore, active check) and `expireAt(t)` with
 * each ejection's end; `current(now)` then bumps once when such a time has passed.
 */
export class AvailabilityVersion {
  #value = 0;
  /** Min-heap of pending expiry times. */
  readonly #times: number[] = [];

  /** Marks a change now. */
  bump(): void {
    this.#value++;
  }

  /** Marks a change that will happen at `at` (ms), such as the end of an ejection. */
  expireAt(at: number): void {
    const t = this.#times;
    let p = t.length;
    t.push(at);
    while (p > 0) {
      const q = (p - 1) >> 1;
      if (t[q] <= at) break;
      t[p] = t[q];
      p = q;
    }
    t[p] = at;
  }

  /** The version for a pick at `now`. O(1) unless expiry times have passed. */
  current(now: number): number {
    const t = this.#times;
    if (t.length > 0 && t[0] <= now) {
      while (t.length > 0 && t[0] <= now) this.#pop();
      this.#value++;
    }
    return this.#value;
  }

  #pop(): void {
    const t = this.#times;
    const last = t.pop()!;
    const len = t.length;
    if (len === 0) return;
    let p = 0;
    for (;;) {
      let c = 2 * p + 1;
      if (c >= len) break;
      if (c + 1 < len && t[c + 1] < t[c]) c++;
      if (t[c] >= last) break;
      t[p] = t[c];
      p = c;
    }
    t[p] = last;
  }
}
