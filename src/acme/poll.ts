/**
 * How long to wait before polling an ACME object again (RFC 8555 §7.5.1, §7.4): the server's
 * `Retry-After` (seconds or an HTTP date) within bounds, else a short doubling delay.
 */

/** Shortest wait between two polls (ms). */
export const POLL_MIN = 100;
/** Longest wait a `Retry-After` may ask for (ms); the order's own deadline still applies. */
export const POLL_MAX = 10_000;
/** Without `Retry-After`: 250 ms doubling per poll to 4 s. */
const DEFAULT_FIRST = 250;
const DEFAULT_MAX = 4_000;

/** The wait before poll number `attempt` (0 first) given the last answer's `Retry-After`. */
export function pollDelay(retryAfter: string | null, now: number, attempt: number): number {
  const clamp = (ms: number) => Math.min(POLL_MAX, Math.max(POLL_MIN, ms));
  if (retryAfter !== null) {
    const v = retryAfter.trim();
    if (/^\d{1,9}$/.test(v)) return clamp(Number(v) * 1000);
    const at = Date.parse(v);
    if (!Number.isNaN(at) && /[A-Za-z]/.test(v)) return clamp(at - now);
  }
  return Math.min(DEFAULT_MAX, DEFAULT_FIRST * 2 ** Math.min(attempt, 10));
}
