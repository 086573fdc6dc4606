/**
 * When to order a certificate again: a pure policy with time and randomness injected.
 *
 * - Renewal at two thirds of the certificate's lifetime, less a random jitter of up to 5% of
 *   the lifetime (instances and hosts do not all ask at once): a 90-day certificate renews
 *   between day 55.5 and day 60, a 6-day one between day 3.7 and day 4.
 * - After a failed order, the next try waits 1 min doubling per consecutive failure to at
 *   most 1 h, each +-10% at random. The certificate in place keeps serving meanwhile. A CA's
 *   `Retry-After` (a rate limit) makes the wait longer, never shorter, up to a day.
 */
import type { Random } from "../base/mod.ts";

export const RENEW_AT = 2 / 3;
export const JITTER = 0.05;
export const RETRY_FIRST = 60_000;
export const RETRY_MAX = 3_600_000;

/** The time (ms) to start renewing a certificate valid from `notBefore` to `notAfter`. */
export function renewalTime(notBefore: number, notAfter: number, random: Random): number {
  const life = Math.max(0, notAfter - notBefore);
  return notBefore + life * RENEW_AT - life * JITTER * random();
}

/** The wait (ms) before trying again after `failures` (1 or more) failed orders in a row. */
export function retryDelay(failures: number, random: Random): number {
  const n = Math.max(1, failures);
  const base = Math.min(RETRY_MAX, RETRY_FIRST * 2 ** Math.min(n - 1, 20));
  return Math.round(base * (0.9 + 0.2 * random()));
}

/** The longest `Retry-After` honoured after a failed order: a day. */
export const RETRY_AFTER_MAX = 86_400_000;

/**
 * The wait (ms) a failed order's `Retry-After` asks for (delay seconds or an HTTP date), at
 * most a day; 0 when absent or unusable.
 */
export function retryAfterMs(header: string | null, now: number): number {
  if (header === null) return 0;
  const v = header.trim();
  let ms: number;
  if (/^\d{1,9}$/.test(v)) ms = Number(v) * 1000;
  else {
    const at = Date.parse(v);
    if (Number.isNaN(at) || !/[A-Za-z]/.test(v)) return 0;
    ms = at - now;
  }
  return Math.min(RETRY_AFTER_MAX, Math.max(0, ms));
}
