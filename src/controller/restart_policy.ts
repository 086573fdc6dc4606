/**
 * Restart backoff for crashed instances (ADR-0035): exponential from `base` (1 s) to `cap`
 * (60 s); more than `maxRestarts` failures within `window` leaves the slot Failed, so a broken
 * instance cannot start a fork storm. Pure: the caller passes the time.
 */

export interface RestartOptions {
  /** Restarts allowed within `window`; default 5. */
  readonly maxRestarts: number;
  /** Milliseconds; default 5 min. */
  readonly window: number;
  /** First delay in ms; default 1 s. */
  readonly base?: number;
  /** Longest delay in ms; default 60 s. */
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
  const base = opts.base ?? 1_000;
  const cap = opts.cap ?? 60_000;
  const delay = Math.min(cap, base * 2 ** (failures.length - 1));
  return { restart: true, delay, failures };
}
