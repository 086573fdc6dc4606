/**
 * Returning memory after a burst of load. Under load V8 grows its young generation and Deno
 * buffers every connection; once the load is gone that memory stays with the process (see
 * memory_release.ts). The trimmer samples the request count and the RSS once a second and
 * releases memory when the process has been quiet for a while and has grown since the last
 * release. A release is a pause of tens of milliseconds, so it only happens when at most a
 * few requests per second arrive, and at most once per `minIntervalMs`.
 */
import { log } from "./log.ts";
import type { MemoryReleaser } from "./memory_release.ts";

const MIB = 1024 * 1024;

export interface TrimSettings {
  /** How long the request rate must stay at or below `quietRate` (ms). */
  quietMs: number;
  /** Requests per second that still count as quiet (health checks, a trickle). */
  quietRate: number;
  /** RSS growth over the last release (or the start) that is worth a release (bytes). */
  growthBytes: number;
  /** Least time between two releases (ms). */
  minIntervalMs: number;
}

export const TRIM_DEFAULTS: Readonly<TrimSettings> = Object.freeze({
  quietMs: 3_000,
  quietRate: 5,
  growthBytes: 24 * MIB,
  minIntervalMs: 10_000,
});

/** The decision alone: fed samples, it says when to release. Time is injected. */
export class TrimPolicy {
  private baseline: number;
  private lastAt = -1;
  private lastRequests = 0;
  /** When the current quiet stretch began; -1 while requests arrive faster than quietRate. */
  private quietSince = -1;
  private lastRelease = -Infinity;

  constructor(private readonly settings: TrimSettings, rssAtStart: number) {
    this.baseline = rssAtStart;
  }

  /** One sample at `now` (ms): requests answered so far, RSS in bytes. True: release now. */
  sample(now: number, requests: number, rss: number): boolean {
    const s = this.settings;
    if (this.lastAt >= 0 && now > this.lastAt) {
      const rate = (requests - this.lastRequests) * 1000 / (now - this.lastAt);
      if (rate > s.quietRate) this.quietSince = -1;
      else if (this.quietSince < 0) this.quietSince = this.lastAt;
    }
    this.lastAt = now;
    this.lastRequests = requests;
    // Memory the process gave back by itself lowers the mark.
    if (rss < this.baseline) this.baseline = rss;
    return this.quietSince >= 0 && now - this.quietSince >= s.quietMs &&
      rss - this.baseline >= s.growthBytes && now - this.lastRelease >= s.minIntervalMs;
  }

  /** A release ended at `now`, leaving `rss`: the new mark. */
  released(now: number, rss: number): void {
    this.lastRelease = now;
    this.baseline = rss;
  }
}

/** Samples this process once a second and releases memory when the policy says so. */
export class MemoryTrimmer {
  private readonly policy: TrimPolicy;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    /** Requests answered so far (a counter that only grows). */
    private readonly requests: () => number,
    private readonly releaser: MemoryReleaser,
    settings: TrimSettings = TRIM_DEFAULTS,
    private readonly now: () => number = () => performance.now(),
    private readonly rss: () => number = () => Deno.memoryUsage().rss,
  ) {
    this.policy = new TrimPolicy(settings, rss());
  }

  start(intervalMs = 1_000): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(this.tick, intervalMs);
    // The sampler alone must not keep the process alive.
    Deno.unrefTimer(this.timer);
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One sample; returns true when it released memory. */
  readonly tick = (): boolean => {
    const before = this.rss();
    if (!this.policy.sample(this.now(), this.requests(), before)) return false;
    const t0 = this.now();
    this.releaser.release();
    const end = this.now();
    const after = this.rss();
    this.policy.released(end, after);
    log("info", "memory_released", {
      rss_before_mib: Math.round(before / MIB),
      rss_after_mib: Math.round(after / MIB),
      pause_ms: Math.round(end - t0),
    });
    return true;
  };
}
