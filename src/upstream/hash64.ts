/**
 * A stable, fast 64-bit string hash built from 32-bit operations, and the rendezvous draw of a
 * (key, member) pair: a double strictly inside (0, 1). Stable means the same strings give the
 * same numbers in every process and version: instances that hash a header or a client address
 * agree on the member, so these constants must never change.
 *
 * The draw mixes the key's hash with the member's hash (made with another seed, so the pair is
 * ordered) through a 64-bit finalizer; a balancer hashes each member once when it is built and
 * the key once per pick, leaving four multiplications per member.
 */

const P1 = 0x9e3779b1;
const P2 = 0x85ebca77;
const P3 = 0xc2b2ae3d;
const P4 = 0x27d4eb2f;
const SEED_HI = 0x6a09e667;
const SEED_LO = 0x3c6ef372;
/** Seed of member address hashes (keys use 0). */
export const MEMBER_SEED = 0x5bd1e995;
/** 2^-52: u = (n + 0.5) * 2^-52 for a 52-bit n is exact and lies in [2^-53, 1 - 2^-53]. */
const UNIT = 1 / 4503599627370496;

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h;
}

/**
 * Hashes the UTF-16 code units of `s` to 64 bits, written to `out[0]` (high) and `out[1]`
 * (low) as unsigned 32-bit numbers. `seed` (default 0) selects an unrelated hash. No allocation.
 */
export function hashString64(s: string, out: Uint32Array, seed = 0): void {
  const len = s.length;
  let a = SEED_HI ^ len ^ seed;
  let b = SEED_LO + Math.imul(len ^ seed, P3);
  let i = 0;
  // Two code units per round keep the loop short for typical keys (addresses, ids).
  for (; i + 1 < len; i += 2) {
    const k = s.charCodeAt(i) | (s.charCodeAt(i + 1) << 16);
    a = Math.imul(a ^ k, P1);
    a = (a << 15) | (a >>> 17);
    b = Math.imul(b + k, P2);
    b = ((b << 13) | (b >>> 19)) ^ a;
  }
  if (i < len) {
    const k = s.charCodeAt(i);
    a = Math.imul(a ^ k, P1);
    a = (a << 15) | (a >>> 17);
    b = Math.imul(b + k, P2);
    b = ((b << 13) | (b >>> 19)) ^ a;
  }
  a = fmix32(a ^ Math.imul(b ^ (b >>> 15), P3));
  b = fmix32(b + Math.imul(a ^ (a >>> 13), P4));
  a = fmix32(a ^ b);
  out[0] = a;
  out[1] = b;
}

/**
 * The high 32 bits of the draw of a key hash and a member hash, as a signed 32-bit number whose
 * signed order is the unsigned order of those bits: comparing it compares draws (equal values
 * need `unitFromHashes` to decide). Same mixing as `unitFromHashes`.
 */
export function drawHigh(kHi: number, kLo: number, mHi: number, mLo: number): number {
  let x = kLo ^ mLo;
  let y = kHi ^ mHi;
  y = Math.imul(y ^ (x >>> 16), P1);
  x = Math.imul(x ^ (y >>> 15), P2);
  y = Math.imul(y ^ (x >>> 13), P3);
  x = Math.imul(x ^ (y >>> 16), P4);
  return (y ^ (x >>> 15)) ^ -2147483648;
}

/** The draw of a key hash and a member hash: a double in (0, 1), never 0 and never 1. */
export function unitFromHashes(kHi: number, kLo: number, mHi: number, mLo: number): number {
  let x = kLo ^ mLo;
  let y = kHi ^ mHi;
  y = Math.imul(y ^ (x >>> 16), P1);
  x = Math.imul(x ^ (y >>> 15), P2);
  y = Math.imul(y ^ (x >>> 13), P3);
  x = Math.imul(x ^ (y >>> 16), P4);
  y ^= x >>> 15;
  // 32 bits of y and the top 20 of x: a 52-bit integer, exact in a double.
  return ((y >>> 0) * 1048576 + (x >>> 12) + 0.5) * UNIT;
}

const scratchKey = new Uint32Array(2);
const scratchMember = new Uint32Array(2);

/** The rendezvous draw of `key` for a member at `address`: a stable double in (0, 1). */
export function hash64(key: string, address: string): number {
  hashString64(key, scratchKey);
  hashString64(address, scratchMember, MEMBER_SEED);
  return unitFromHashes(scratchKey[0], scratchKey[1], scratchMember[0], scratchMember[1]);
}
