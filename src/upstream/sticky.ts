/**
 * Sticky pins: a cookie that holds a member for a fixed time from assignment (not sliding).
 * The value is `<member affinity value>.<expiry, unix seconds>.<signature>`, the signature
 * being the first 16 bytes of HMAC-SHA256 (lower-case hex) under the affinity key, so a
 * client can neither forge a pin nor move its expiry, and an expired pin is refused however
 * long the browser keeps it.
 */

import { createHmac } from "node:crypto";
import { type AffinityKey, buildAffinityCookie } from "./affinity.ts";

/** Separates sticky signatures from affinity values made with the same key. */
const CONTEXT = "scalws-sticky\n";
const AFF_LEN = 32;
const SIG_LEN = 32;
/** Expiry digits: up to 12 (unix seconds far beyond any TTL). */
const MIN_LEN = AFF_LEN + 1 + 1 + 1 + SIG_LEN;
const MAX_LEN = AFF_LEN + 1 + 12 + 1 + SIG_LEN;
const CACHE_SLOTS = 256;

/** Recently verified pins, so a client that repeats its cookie costs no HMAC. */
class VerifiedCache {
  readonly values: (string | undefined)[] = new Array(CACHE_SLOTS).fill(undefined);
  readonly members: string[] = new Array(CACHE_SLOTS).fill("");
  readonly expiries = new Float64Array(CACHE_SLOTS);
}

const caches = new WeakMap<AffinityKey, VerifiedCache>();

function cacheOf(key: AffinityKey): VerifiedCache {
  let c = caches.get(key);
  if (c === undefined) {
    c = new VerifiedCache();
    caches.set(key, c);
  }
  return c;
}

function sign(key: AffinityKey, body: string): string {
  return createHmac("sha256", key.bytes).update(CONTEXT + body).digest("hex").slice(0, SIG_LEN);
}

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/** Cache slot from the last two hex digits of the signature (any value maps somewhere). */
function slotOf(value: string): number {
  const n = value.length;
  return ((value.charCodeAt(n - 2) * 31) ^ value.charCodeAt(n - 1)) & (CACHE_SLOTS - 1);
}

/** The expiry of a pin issued at `now` (ms) for `ttlMs`: unix seconds, rounded up. */
export function stickyExpiry(now: number, ttlMs: number): number {
  return Math.ceil((now + ttlMs) / 1000);
}

/** A signed pin of the member with affinity value `memberAffinityValue`, valid for `ttlMs`. */
export function issueSticky(
  key: AffinityKey,
  memberAffinityValue: string,
  now: number,
  ttlMs: number,
): string {
  const exp = stickyExpiry(now, ttlMs);
  const body = memberAffinityValue + "." + exp;
  const value = body + "." + sign(key, body);
  const cache = cacheOf(key);
  const slot = slotOf(value);
  cache.values[slot] = value;
  cache.members[slot] = memberAffinityValue;
  cache.expiries[slot] = exp;
  return value;
}

/**
 * The member affinity value a pin names, or undefined when the pin is malformed, forged,
 * edited or expired at `now` (ms). The signature is compared in constant time.
 */
export function verifySticky(key: AffinityKey, value: string, now: number): string | undefined {
  const len = value.length;
  if (len < MIN_LEN || len > MAX_LEN) return undefined;
  const cache = cacheOf(key);
  const slot = slotOf(value);
  if (cache.values[slot] === value) {
    return now < cache.expiries[slot] * 1000 ? cache.members[slot] : undefined;
  }
  const sigAt = len - SIG_LEN;
  if (value.charCodeAt(AFF_LEN) !== 46 || value.charCodeAt(sigAt - 1) !== 46) return undefined;
  for (let i = 0; i < AFF_LEN; i++) if (hexDigit(value.charCodeAt(i)) < 0) return undefined;
  let exp = 0;
  for (let i = AFF_LEN + 1; i < sigAt - 1; i++) {
    const c = value.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
    exp = exp * 10 + (c - 48);
  }
  // Expiry first: it is in the clear, and an expired pin needs no HMAC.
  if (!(now < exp * 1000)) return undefined;
  const expected = sign(key, value.slice(0, sigAt - 1));
  let diff = 0;
  for (let i = 0; i < SIG_LEN; i++) diff |= expected.charCodeAt(i) ^ value.charCodeAt(sigAt + i);
  if (diff !== 0) return undefined;
  const member = value.slice(0, AFF_LEN);
  cache.values[slot] = value;
  cache.members[slot] = member;
  cache.expiries[slot] = exp;
  return member;
}

/**
 * The `Set-Cookie` value of a pin: like the affinity cookie, with `Max-Age` the TTL in
 * seconds (rounded up).
 */
export function buildStickyCookie(
  name: string,
  value: string,
  ttlMs: number,
  secure: boolean,
): string {
  return buildAffinityCookie(name, value, Math.ceil(ttlMs / 1000), secure);
}
