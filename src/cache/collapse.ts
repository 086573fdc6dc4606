/**
 * Miss collapsing: the first miss for a key goes to the member (the leader); later misses
 * for the same key wait for it, at most a bounded time, then look the store up again. A
 * waiter that finds nothing usable goes to the member on its own.
 */

/** Default longest wait for another request's answer: 5 s. */
export const COLLAPSE_WAIT = 5_000;

class Flight {
  waiters: (() => void)[] = [];
}

export class Collapser {
  private readonly flights = new Map<string, Flight>();

  /** Requests waiting on other requests right now. */
  waiting = 0;

  /** True when a leader for `key` is already under way. */
  busy(key: string): boolean {
    return this.flights.has(key);
  }

  /** Makes the caller the leader for `key`; false when there is one already. */
  lead(key: string): boolean {
    if (this.flights.has(key)) return false;
    this.flights.set(key, new Flight());
    return true;
  }

  /** The leader is done (stored or not): wakes every waiter. Idempotent. */
  done(key: string): void {
    const f = this.flights.get(key);
    if (f === undefined) return;
    this.flights.delete(key);
    for (const w of f.waiters) w();
  }

  /**
   * Resolves when the leader for `key` is done or after `ms`, whichever comes first; at
   * once when there is no leader.
   */
  wait(key: string, ms: number): Promise<void> {
    const f = this.flights.get(key);
    if (f === undefined) return Promise.resolve();
    this.waiting++;
    return new Promise<void>((resolve) => {
      let settled = false;
      const finish = () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.waiting--;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      f.waiters.push(finish);
    });
  }
}
