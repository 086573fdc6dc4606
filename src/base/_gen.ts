/**
 * Test support: the one seeded case generator of the fuzz tests and drivers, over
 * `base/random.ts`'s generator, so that a seed replays the same cases. Fuzzers with their own
 * shapes (field values, targets, bodies) extend it; nothing in production imports it.
 */

import { type Random, seeded } from "./random.ts";

/** tchar bytes (RFC 9110 5.6.2) as a string. */
export const TCHARS =
  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_!#$%&'*+.^`|~";

/** Seeded choices for generated cases. */
export class Gen {
  readonly r: Random;

  constructor(seed: number) {
    this.r = seeded(seed);
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.r() * n);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.r() < p;
  }

  /** One element of `xs`. */
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }

  /** 1 to `max` tchar bytes. */
  token(max = 12): string {
    let s = "";
    for (let i = 1 + this.int(max); i > 0; i--) s += TCHARS[this.int(TCHARS.length)];
    return s;
  }
}
