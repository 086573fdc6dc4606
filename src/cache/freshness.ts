/**
 * Freshness lifetime and age (RFC 9111 4.2) for a shared cache: explicit freshness
 * (`s-maxage`, then `max-age`, then `Expires` against the member's `Date`), else a heuristic
 * from `Last-Modified` (4.2.2) for the statuses RFC 9110 15.1 marks heuristically cacheable.
 * Times are milliseconds from an injected clock; ages and lifetimes are whole seconds.
 */
import type { CacheControl } from "./cache_control.ts";
import { parseHttpDate } from "./http_date.ts";

/** What the age calculation needs from the moment a response was received. */
export interface AgeBasis {
  /** Clock time when the request was sent to the member. */
  readonly requestTime: number;
  /** Clock time when the response head arrived. */
  readonly responseTime: number;
  /** The member's `Date` in ms (NaN when absent or invalid: then the response time). */
  readonly dateValue: number;
  /** The member's `Age` in seconds (0 when absent or invalid). */
  readonly ageValue: number;
}

/**
 * The freshness lifetime in seconds, or -1 when the response has no explicit freshness.
 * `date` is the member's `Date` in ms, or the time the answer was received when it sent none
 * (RFC 9110 6.6.1; scalwsd's HTTP/1 client keeps the member's Date back, like nginx). An
 * invalid `Expires` counts as already expired (lifetime 0), as RFC 9111 5.3 says.
 */
export function freshnessLifetime(
  cc: CacheControl,
  expires: string | null,
  date: number,
): number {
  if (cc.sMaxage >= 0) return cc.sMaxage;
  if (cc.maxAge >= 0) return cc.maxAge;
  if (expires === null) return -1;
  const e = parseHttpDate(expires);
  if (Number.isNaN(e) || Number.isNaN(date)) return 0;
  return Math.max(0, Math.floor((e - date) / 1000));
}

/**
 * `Age` header value in seconds: a non-negative integer, else 0 (RFC 9111 5.1). Of a list
 * (`7200, 0`, or two `Age` lines joined), the first member counts, as 5.1 says.
 */
export function parseAge(value: string | null): number {
  if (value === null) return 0;
  const comma = value.indexOf(",");
  const v = (comma < 0 ? value : value.slice(0, comma)).trim();
  if (!/^[0-9]+$/.test(v)) return 0;
  return Math.min(Number(v), 2_147_483_648);
}

/** corrected_initial_age of RFC 9111 4.2.3, in seconds. */
export function initialAge(b: AgeBasis): number {
  const date = Number.isNaN(b.dateValue) ? b.responseTime : b.dateValue;
  const apparent = Math.max(0, (b.responseTime - date) / 1000);
  const delay = Math.max(0, (b.responseTime - b.requestTime) / 1000);
  return Math.max(apparent, b.ageValue + delay);
}

/** current_age in whole seconds at clock time `now`. */
export function currentAge(b: AgeBasis, now: number): number {
  return Math.floor(initialAge(b) + Math.max(0, (now - b.responseTime) / 1000));
}

/**
 * True when an entry `staleness` seconds past its lifetime may still be served under a
 * `stale-while-revalidate` or `stale-if-error` window of `window` seconds. A window of 0 (the
 * directive absent) allows nothing, not even an entry that has only just become stale.
 */
export function inStaleWindow(staleness: number, window: number): boolean {
  return window > 0 && staleness <= window;
}

/**
 * Whether the request's own limits (RFC 9111 5.2.1) send a stored answer `age` seconds old with
 * `ttl` seconds of freshness left to the member. `no-cache` always does. A fresh `immutable`
 * answer (RFC 8246) is not revalidated for a request's `max-age` (a browser's reload); once stale
 * it is treated like any other. Ages are whole seconds: a stored answer is always older than
 * `max-age=0`.
 */
export function clientRevalidates(
  rcc: CacheControl,
  age: number,
  ttl: number,
  immutable: boolean,
): boolean {
  if (rcc.noCache) return true;
  if (rcc.minFresh >= 0 && ttl < rcc.minFresh) return true;
  if (rcc.maxAge < 0 || (immutable && ttl > 0)) return false;
  return age > rcc.maxAge || rcc.maxAge === 0;
}

/** Statuses heuristically cacheable by default (RFC 9110 15.1). */
export const HEURISTIC_STATUS: ReadonlySet<number> = new Set([
  200,
  203,
  204,
  206,
  300,
  301,
  308,
  404,
  405,
  410,
  414,
  501,
]);

/**
 * Heuristic freshness (RFC 9111 4.2.2) in seconds: 10% of the time from `Last-Modified` to
 * `date` (the member's `Date`, else the arrival time), at most `max` seconds; -1 when the status
 * is not heuristically cacheable, `Last-Modified` is absent, invalid or not before `date`, or
 * `max` is 0 (off). Only for answers without explicit freshness.
 */
export function heuristicLifetime(
  status: number,
  lastModified: string | null,
  date: number,
  max: number,
): number {
  if (max <= 0 || !HEURISTIC_STATUS.has(status)) return -1;
  const lm = parseHttpDate(lastModified);
  if (Number.isNaN(lm) || Number.isNaN(date) || lm >= date) return -1;
  return Math.min(max, Math.floor((date - lm) / 10_000));
}
