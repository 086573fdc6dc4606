/**
 * When a crashed worker starts again: after 1 s, doubling with each restart inside the window
 * up to 60 s; more than `max_restarts` restarts in `restart_window` and the worker is given up.
 */

/** First delay before a restart (ms). */
export const FIRST_DELAY = 1000;
/** Longest delay before a restart (ms). */
export const MAX_DELAY = 60_000;

/** Restarts of one worker slot, by time. Pure: the caller passes the clock's time. */
export class RestartWindow {
  /** Times of restarts still inside the window, oldest first. */
  readonly times: number[] = [];

  constructor(readonly maxRestarts: number, readonly windowMs: number) {}

  /**
   * A crash at `now`: returns the delay (ms) before the restart, or -1 when `max_restarts` are
   * already used up inside the window (the worker is given up).
   */
  crashed(now: number): number {
    const t = this.times;
    while (t.length > 0 && now - t[0] >= this.windowMs) t.shift();
    if (t.length >= this.maxRestarts) return -1;
    t.push(now);
    return Math.min(MAX_DELAY, FIRST_DELAY * 2 ** (t.length - 1));
  }
}
