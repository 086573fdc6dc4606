/** Waiting in tests: one `sleep`, one `waitUntil`. */

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** What `waitUntil` waits for, and for how long. */
export interface WaitOptions {
  /** Named in the error when time runs out: `timed out after 3000 ms waiting for WHAT`. */
  readonly what: string;
  /** Default 5000. */
  readonly timeoutMs?: number;
  /** Pause between two tries; default 5. */
  readonly intervalMs?: number;
}

/**
 * Calls `cond` until it returns a value other than `false`, `undefined` or `null`, and returns
 * that value. A throw counts as "not yet"; the last one is named if time runs out.
 */
export async function waitUntil<T>(
  cond: () => T | Promise<T>,
  { what, timeoutMs = 5000, intervalMs = 5 }: WaitOptions,
): Promise<Exclude<T, false | undefined | null>> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await cond();
      if (v !== false && v !== undefined && v !== null) {
        return v as Exclude<T, false | undefined | null>;
      }
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) {
      const why = last === undefined ? "" : `: ${last instanceof Error ? last.message : last}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await sleep(intervalMs);
  }
}
