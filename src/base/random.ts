/** A number in [0, 1), like `Math.random`. */
export type Random = () => number;

/**
 * A small seeded generator (mulberry32) of numbers in [0, 1): for tests, fuzzers and benches
 * that must replay the same sequence. Not for anything secret.
 */
export function seeded(seed: number): Random {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
