/**
 * One shared timer for every per-request deadline. A `setTimeout` plus `clearTimeout` pair
 * costs about 2.8 us in Deno 2.9 (measured here); arming this is a Set insert (~0.1 us).
 * The timer runs only while something is armed, every 1/16 of the shortest timeout armed
 * since it started (at least `tick`, at most 1 s): a deadline fires at most 1/16 late, and
 * 60 s response timeouts cost one wake-up a second, not a hundred (a 10 ms tick cost an idle
 * PHP site, its requests waiting on PHP, about 30 ms/s of CPU).
 */

/** `expiresAt` of an item disarmed but not yet dropped from the set. */
const DISARMED = -1;

/** Something with a deadline. */
export interface Expirable {
  /** Milliseconds on the watchdog's clock; set by `arm`. */
  expiresAt: number;
  /** Called once when the deadline passed while armed. */
  expire(): void;
}

/** Longest period between two checks (ms). */
const MAX_PERIOD = 1000;

/**
 * Checks armed deadlines while any is armed: every `tick` ms (default 10) at the most often,
 * else every 1/16 of the shortest timeout armed, at most every second.
 */
export class Watchdog {
  readonly tick: number;
  readonly #now: () => number;
  readonly #armed = new Set<Expirable>();
  #timer: ReturnType<typeof setInterval> | undefined;
  /** The running timer's period (ms). */
  #period = 0;

  constructor(tick = 10, now: () => number = Date.now) {
    this.tick = tick;
    this.#now = now;
  }

  /** Number of armed deadlines (for tests). */
  get armed(): number {
    let n = 0;
    for (const item of this.#armed) if (item.expiresAt !== DISARMED) n++;
    return n;
  }

  /** Arms `item` to expire `timeoutMs` from now; 0 or less means never. */
  arm(item: Expirable, timeoutMs: number): void {
    if (!(timeoutMs > 0)) return;
    item.expiresAt = this.#now() + timeoutMs;
    this.#armed.add(item);
    const period = Math.min(MAX_PERIOD, Math.max(this.tick, timeoutMs >> 4));
    if (this.#timer !== undefined) {
      if (period >= this.#period) return;
      clearInterval(this.#timer);
    }
    this.#period = period;
    this.#timer = setInterval(sweep, period, this);
    // Pending socket reads keep the process alive; the timer alone must not.
    Deno.unrefTimer(this.#timer);
  }

  /** The running timer's period in ms; 0 when stopped (for tests). */
  get period(): number {
    return this.#timer === undefined ? 0 : this.#period;
  }

  /**
   * Disarms `item`: it stays in the set, marked, until the next sweep drops it, so that the
   * usual arm-then-disarm of every request costs no set removal and insertion.
   */
  disarm(item: Expirable): void {
    item.expiresAt = DISARMED;
  }

  /** Expires what is due; stops the timer once nothing is armed. */
  sweep(): void {
    if (this.#armed.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      this.#period = 0;
      return;
    }
    const now = this.#now();
    for (const item of this.#armed) {
      const at = item.expiresAt;
      if (at === DISARMED) this.#armed.delete(item);
      else if (at <= now) {
        this.#armed.delete(item);
        item.expire();
      }
    }
  }
}

function sweep(w: Watchdog): void {
  w.sweep();
}

/** The process-wide watchdog used by `send`. */
export const watchdog: Watchdog = new Watchdog();
