/**
 * When to order a certificate again: a pure policy with time and randomness injected.
 *
 * - Renewal at two thirds of the certificate's lifetime, less a random jitter of up to 5% of
 *   the lifetime (instances and hosts do not all ask at once): a 90-day certificate renews
 *   between day 55.5 and day 60, a 6-day one between day 3.7 and day 4.
 * - After a failed order, the next try waits 1 min doubling per consecutive failure to at
 *   most 1 h, each +-10% at random. The certificate in place keeps serving meanwhile.
 */
import type { Random } from "../base/random.ts";

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
