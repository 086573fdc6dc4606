/**
 * A token bucket: holds up to `capacity` tokens, refilled continuously at `perMs` tokens per
 * millisecond; a request takes one. Pure: the caller passes the time.
 */
export class TokenBucket {
  /** Tokens at `last`. */
  tokens: number;
  /** Milliseconds on the caller's clock. */
  last: number;

  /** A full bucket at `now`. */
  constructor(capacity: number, now: number) {
    this.tokens = capacity;
    this.last = now;
  }

  /** Takes a token at `now`: 0 when one was there, else the milliseconds until one will be. */
  take(now: number, capacity: number, perMs: number): number {
    let t = this.tokens;
    if (now > this.last) {
      t += (now - this.last) * perMs;
      if (t > capacity) t = capacity;
      this.last = now;
    }
    if (t >= 1) {
      this.tokens = t - 1;
      return 0;
    }
    this.tokens = t;
    return (1 - t) / perMs;
  }

  /** Whether the bucket would be full at `now` (so forgetting it changes nothing). */
  fullAt(now: number, capacity: number, perMs: number): boolean {
    return this.tokens + (now - this.last) * perMs >= capacity;
  }
}
