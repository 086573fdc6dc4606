/**
 * What the Upstreams console draws: per member, requests per second and p99 latency over the
 * last 15 minutes, and the pool's member changes, ejections and recoveries on the same time
 * axis. Kept in bounded ring buffers in the process (90 samples of 10 s, 256 events); nothing
 * is stored on disk and nothing is kept for a member once it has left every sample.
 */

/** Upper bounds (ms) of the latency buckets a member counts its answers in; the last is open. */
export const LATENCY_BOUNDS_MS: readonly number[] = [
  1,
  2,
  5,
  10,
  20,
  50,
  100,
  200,
  500,
  1_000,
  2_000,
  5_000,
  10_000,
  30_000,
];

/** The bucket of an answer that took `ms`. */
export function latencyBucket(ms: number): number {
  let i = 0;
  while (i < LATENCY_BOUNDS_MS.length && ms > LATENCY_BOUNDS_MS[i]) i++;
  return i;
}

/** A fresh set of latency buckets. */
export function latencyBuckets(): Uint32Array {
  return new Uint32Array(LATENCY_BOUNDS_MS.length + 1);
}

export type PoolEventKind = "added" | "removed" | "ejected" | "restored";

export interface PoolEvent {
  readonly t: number;
  readonly kind: PoolEventKind;
  readonly member: string;
}

/** One member in one sample: requests per second, and p99 (bucket bound, ms) or null. */
export interface MemberSample {
  readonly rps: number;
  readonly p99_ms: number | null;
}

export interface HistorySample {
  readonly t: number;
  readonly members: Readonly<Record<string, MemberSample>>;
}

/** What a sample reads of a member: its attempts so far and its latency buckets. */
export interface Sampled {
  readonly address: string;
  readonly attempts: number;
  readonly latency: Uint32Array;
}

interface Previous {
  attempts: number;
  latency: Uint32Array;
}

/** The p99 of bucket counts (the bound of the bucket holding it; the open one reads as 60 s). */
export function p99(counts: ArrayLike<number>): number | null {
  let n = 0;
  for (let i = 0; i < counts.length; i++) n += counts[i];
  if (n === 0) return null;
  const rank = Math.ceil(n * 0.99);
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i];
    if (seen >= rank) return LATENCY_BOUNDS_MS[i] ?? 60_000;
  }
  return null;
}

/** A pool's samples and events, bounded. */
export class PoolHistory {
  readonly samples: HistorySample[] = [];
  readonly events: PoolEvent[] = [];
  private readonly previous = new Map<string, Previous>();
  private lastAt = 0;

  /** `capacity` samples (default 90: 15 min of 10 s), `maxEvents` events (default 256). */
  constructor(readonly capacity = 90, readonly maxEvents = 256) {}

  /** Records an event at `t`. */
  event(t: number, kind: PoolEventKind, member: string): void {
    this.events.push({ t, kind, member });
    if (this.events.length > this.maxEvents) this.events.shift();
  }

  /** Takes one sample at `t` of `members`: what each did since the previous sample. */
  sample(t: number, members: Iterable<Sampled>): void {
    const seconds = this.lastAt > 0 ? (t - this.lastAt) / 1000 : 0;
    this.lastAt = t;
    const out: Record<string, MemberSample> = {};
    const seen = new Set<string>();
    for (const m of members) {
      seen.add(m.address);
      const prev = this.previous.get(m.address);
      if (prev !== undefined && seconds > 0) {
        const delta = new Array<number>(m.latency.length);
        for (let i = 0; i < delta.length; i++) delta[i] = m.latency[i] - prev.latency[i];
        out[m.address] = {
          rps: Math.round(((m.attempts - prev.attempts) / seconds) * 100) / 100,
          p99_ms: p99(delta),
        };
      }
      this.previous.set(m.address, { attempts: m.attempts, latency: m.latency.slice() });
    }
    for (const k of this.previous.keys()) if (!seen.has(k)) this.previous.delete(k);
    if (seconds > 0) {
      this.samples.push({ t, members: out });
      if (this.samples.length > this.capacity) this.samples.shift();
    }
  }
}
