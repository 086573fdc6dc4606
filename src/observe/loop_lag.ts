/**
 * Event-loop lag: a timer due every `interval` ms measures how late it fires. A loop that
 * keeps up fires within a fraction of a millisecond; a saturated one fires late. The p99 over
 * the last `size` samples (5 s by default) is what the controller's PressureScore reads.
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

  /** The 99th percentile (nearest rank) of the window; 0 when empty. */
  p99(): number {
    if (this.count === 0) return 0;
    const sorted = this.samples.slice(0, this.count).sort();
    return sorted[Math.ceil(0.99 * this.count) - 1];
  }
}

/** Samples the lag of this process's event loop until `stop()`. */
export class LoopLagMonitor {
  readonly window: LagWindow;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private due = 0;

  /** `interval`: ms between samples, default 20. */
  constructor(private readonly interval = 20, size = 250) {
    this.window = new LagWindow(size);
  }

  start(): void {
    if (this.timer !== undefined) return;
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
    this.due = performance.now() + this.interval;
    const t = setTimeout(this.tick, this.interval);
    // The sampler alone must not keep the process alive.
    Deno.unrefTimer(t);
    this.timer = t;
  }

  private readonly tick = (): void => {
    this.window.record(performance.now() - this.due);
    this.schedule();
  };
}
