/**
 * The one restart-backoff policy, for crashed application workers (`apps/`) and crashed
 * instances under the controller (`controller/`, ADR-0035): the first restart after 1 s,
 * doubling with each failure still inside the window up to 60 s; more than `maxRestarts`
 * failures within `window` and the slot is given up, so that a broken program cannot start a
 * fork storm. Pure: the caller passes the time from its clock, and keeps the history (the
 * controller persists it in its records; a worker slot keeps a `RestartWindow`).
 */

/** First delay before a restart (ms). */
export const FIRST_DELAY = 1000;
/** Longest delay before a restart (ms). */
export const MAX_DELAY = 60_000;

export interface RestartOptions {
  /** Restarts allowed within `window`. */
  readonly maxRestarts: number;
  /** Milliseconds. */
  readonly window: number;
  /** First delay in ms; default `FIRST_DELAY` (1 s). */
  readonly base?: number;
  /** Longest delay in ms; default `MAX_DELAY` (60 s). */
  readonly cap?: number;
}

export type RestartDecision =
  | { readonly restart: true; readonly delay: number; readonly failures: readonly number[] }
  | { readonly restart: false; readonly failures: readonly number[] };

/**
 * Records a failure at `now` on top of the slot's earlier failure times and decides: restart
 * after `delay` ms (1 s, 2 s, 4 s, ... for the 1st, 2nd, 3rd failure in the window), or give
 * up. `failures` is the new history to keep (only times within the window).
 */
export function onFailure(
  history: readonly number[],
  now: number,
  opts: RestartOptions,
): RestartDecision {
  const failures = [...history.filter((t) => now - t < opts.window), now];
  if (failures.length > opts.maxRestarts) return { restart: false, failures };
  const base = opts.base ?? FIRST_DELAY;
  const cap = opts.cap ?? MAX_DELAY;
  const delay = Math.min(cap, base * 2 ** (failures.length - 1));
  return { restart: true, delay, failures };
}

/**
 * The restarts of one worker slot kept in memory: `onFailure` over the restarts it allowed (a
 * refused one is not kept, so a slot given up and tried again later counts only real
 * restarts).
 */
export class RestartWindow {
  /** Times of restarts still inside the window, oldest first. */
  times: readonly number[] = [];
  readonly #opts: RestartOptions;

  constructor(readonly maxRestarts: number, readonly windowMs: number) {
    this.#opts = { maxRestarts, window: windowMs };
  }

  /**
   * A crash at `now`: returns the delay (ms) before the restart, or -1 when `max_restarts` are
   * already used up inside the window (the worker is given up).
   */
  crashed(now: number): number {
    const d = onFailure(this.times, now, this.#opts);
    if (!d.restart) return -1;
    this.times = d.failures;
    return d.delay;
  }
}
