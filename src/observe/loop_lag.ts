/**
 * Event-loop lag: a timer due every `interval` ms measures how late it fires. A loop that
 * keeps up fires within a fraction of a millisecond; a saturated one fires late. The p99 over
 * the last `size` samples (5 s by default) is what the controller's PressureScore reads. Each
 * sample counts for the `interval`s its wait stood for, so that fewer samples keep the window's
 * time span. Requests faster than one per `interval`: a sample per `interval` (the loop is
 * awake anyway). Slower (a PHP site: a few dozen a second, each waiting on PHP): one per
 * `sparseInterval` (250 ms), as a wake-up with no request to delay tells nothing new and costs
 * most (WordPress at 35 req/s on a shared machine: about 0.45 ms per wake-up of a process that
 * slept; one per request gap was a tenth of scalwsd's CPU per page). None for a second: one a
 * second; none for ten seconds: one in five. Housekeeping with a coarse clock (`periodic`)
 * rides on these wake-ups rather than on timers of its own.
 */

/** A fixed window of the latest lag samples in milliseconds. */
export class LagWindow {
  private readonly samples: Float64Array;
  private count = 0;
  private next = 0;

  /** `size`: samples kept; default 250 (5 s at one sample per 20 ms). */
  constructor(size = 250) {
    this.samples = new Float64Array(size);
  }

  record(lagMs: number): void {
    this.samples[this.next] = lagMs < 0 ? 0 : lagMs;
    this.next = (this.next + 1) % this.samples.length;
    if (this.count < this.samples.length) this.count++;
  }

  /** Records `lagMs` as `times` samples (capped at the window's size). */
  recordTimes(lagMs: number, times: number): void {
    const n = Math.min(times, this.samples.length);
    for (let i = 0; i < n; i++) this.record(lagMs);
  }

  /** The 99th percentile (nearest rank) of the window; 0 when empty. */
  p99(): number {
    if (this.count === 0) return 0;
    const sorted = this.samples.slice(0, this.count).sort();
    return sorted[Math.ceil(0.99 * this.count) - 1];
  }
}

/** Settings of a `LoopLagMonitor`. */
export interface LoopLagOptions {
  /** Ms between samples; default 20. */
  readonly interval?: number;
  /** Samples kept; default 250 (5 s at 20 ms). */
  readonly size?: number;
  /**
   * A counter that grows with work (requests answered). When it stands still for `idleAfter`
   * ms (default 1000), samples come every `idleInterval` ms (default 1000) until it moves
   * again. Without it, every `interval` ms always.
   */
  readonly activity?: () => number;
  readonly idleInterval?: number;
  readonly idleAfter?: number;
  /**
   * While requests come slower than one per `interval` (a PHP site: a few dozen a second,
   * each waiting on PHP), samples come every `sparseInterval` ms (default 250) or once per gap
   * between requests when that is longer.
   */
  readonly sparseInterval?: number;
  /**
   * Still for `sleepAfter` ms (default 10,000), samples come every `sleepInterval` ms (default
   * 5,000): an idle process wakes once in five seconds.
   */
  readonly sleepAfter?: number;
  readonly sleepInterval?: number;
  /**
   * Called from the sampler's own wake-ups about every `periodicMs` (default 1000; the first
   * one that long after `start`), or at each wake-up when they come further apart (every
   * `sleepInterval` once the process sleeps): housekeeping that needs so coarse a clock (the
   * memory trimmer's sample) rides on them rather than waking the process with a timer.
   */
  readonly periodic?: () => void;
  readonly periodicMs?: number;
}

/** Samples the lag of this process's event loop until `stop()`. */
export class LoopLagMonitor {
  readonly window: LagWindow;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private due = 0;
  /** Ms until the timer now due. */
  private wait = 0;
  private lastActivity = -1;
  /** When `activity` last moved (ms). */
  private movedAt = 0;
  /** The gap between requests as last seen, within [interval, idleInterval] (ms). */
  private gap = 0;

  private readonly interval: number;
  private readonly activity: (() => number) | null;
  private readonly idleInterval: number;
  private readonly idleAfter: number;
  private readonly sparseInterval: number;
  private readonly sleepAfter: number;
  private readonly sleepInterval: number;
  private readonly periodic: (() => void) | null;
  private readonly periodicMs: number;
  /** When `periodic` last ran (ms). */
  private periodicAt = 0;

  constructor(options: LoopLagOptions = {}) {
    this.interval = options.interval ?? 20;
    this.activity = options.activity ?? null;
    this.idleInterval = options.idleInterval ?? 1000;
    this.idleAfter = options.idleAfter ?? 1000;
    this.sparseInterval = options.sparseInterval ?? 250;
    this.sleepAfter = options.sleepAfter ?? 10_000;
    this.sleepInterval = options.sleepInterval ?? 5000;
    this.periodic = options.periodic ?? null;
    this.periodicMs = options.periodicMs ?? 1000;
    this.window = new LagWindow(options.size ?? 250);
    this.gap = this.interval;
  }

  start(): void {
    if (this.timer !== undefined) return;
    this.periodicAt = performance.now();
    this.schedule();
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** p99 lag in seconds (the unit of the exported gauge). */
  p99Seconds(): number {
    return this.window.p99() / 1000;
  }

  private schedule(): void {
    const now = performance.now();
    let wait = this.interval;
    if (this.activity !== null) {
      const a = this.activity();
      if (a !== this.lastActivity) {
        if (this.lastActivity >= 0) {
          const seen = (now - this.movedAt) / (a - this.lastActivity);
          this.gap = seen <= this.interval
            ? this.interval
            : Math.min(this.idleInterval, Math.max(this.sparseInterval, seen));
        }
        this.lastActivity = a;
        this.movedAt = now;
        wait = this.gap;
      } else if (now - this.movedAt >= this.sleepAfter) wait = this.sleepInterval;
      else if (now - this.movedAt >= this.idleAfter) wait = this.idleInterval;
      else wait = this.gap;
    }
    this.wait = wait;
    this.due = now + wait;
    const t = setTimeout(this.tick, wait);
    // The sampler alone must not keep the process alive.
    Deno.unrefTimer(t);
    this.timer = t;
  }

  private readonly tick = (): void => {
    const now = performance.now();
    const lag = now - this.due;
    if (this.wait === this.interval) this.window.record(lag);
    else this.window.recordTimes(lag, Math.max(1, Math.round(this.wait / this.interval)));
    // 1% early still counts: an idle sampler fires every idleInterval, give or take its lag.
    if (this.periodic !== null && now - this.periodicAt >= this.periodicMs * 0.99) {
      this.periodicAt = now;
      this.periodic();
    }
    this.schedule();
  };
}
