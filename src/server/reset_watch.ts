/**
 * Which HTTP/2 streams a client reset while their handler worked (rapid reset), watched only
 * once a handler has been at work for `WATCH_AFTER` ms. Reading a Deno.serve request's `signal`
 * costs an async op per request and, on Deno 2.9.6 (legacy abort), a `DOMException` and an
 * abort event when the answer is sent: about 10 us of a proxied HTTP/2 request's CPU in a
 * profile of `h2load -c64 -m1`. A handler that answers sooner costs what a request costs
 * whether or not its stream was reset, so only slower ones are watched; one timer looks at
 * them (a reset before the look shows as an aborted signal then). What is watched is the
 * request's session itself (`Watched`): nothing is allocated per request but a set entry.
 *
 * Deno 2.9.6 does not report a reset that came before the signal was first read, so a client that
 * resets each stream within `WATCH_AFTER` ms of its handler's start would never be seen (its
 * streams leave hyper's concurrency limit while their handlers work on: CVE-2023-44487). So one
 * request in `SAMPLE` is listened to from its start, and its reset, if it comes before
 * `WATCH_AFTER`, counts `SAMPLE` times: a client resetting all its streams early is counted about
 * as fast as if every stream were watched, for a quarter of the cost.
 *
 * It is not the count itself (`ClientConn.resetSeen`) nor what follows (GOAWAY, listener.ts).
 *
 * @module
 */

/** A handler at work this long (ms) is watched for its stream's reset. */
export const WATCH_AFTER = 50;

/** One request in this many is listened to from its start (see the module comment). */
export const SAMPLE = 4;

/** A request at work, as `ResetWatch` keeps it (a `ServeSession`). */
export interface Watched {
  readonly req: Request;
  /** When `watch` took it (the watch's clock, ms). */
  since: number;
  /** Its answer is made: an abort now is Deno's legacy one after the answer, not a reset. */
  settled: boolean;
  /** Counts its stream's reset, `weight` times (a sampled early reset stands for others). */
  reset(weight: number): void;
}

/** The requests at work, oldest first, and the one timer that watches the slow ones. */
export class ResetWatch {
  private readonly young = new Set<Watched>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private watched = 0;

  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly after = WATCH_AFTER,
    private readonly sample = SAMPLE,
  ) {}

  /** Requests not looked at yet. */
  get waiting(): number {
    return this.young.size;
  }

  /**
   * Calls `w.reset(1)` if the client resets the stream before `settle(w)`, once the handler has
   * worked `WATCH_AFTER` ms; one request in `SAMPLE` is listened to from the start instead.
   */
  watch(w: Watched): void {
    const since = w.since = this.now();
    if (++this.watched >= this.sample) {
      this.watched = 0;
      w.req.signal.addEventListener("abort", () => {
        if (!w.settled) w.reset(this.now() - since < this.after ? this.sample : 1);
      }, { once: true });
      return;
    }
    this.young.add(w);
    if (this.timer === undefined) {
      this.timer = setInterval(look, this.after, this);
      Deno.unrefTimer(this.timer as unknown as number);
    }
  }

  /** `w`'s answer is made. */
  settle(w: Watched): void {
    w.settled = true;
    this.young.delete(w);
  }

  /** Watches the signal of every request at work for `WATCH_AFTER` ms or more. */
  look(): void {
    const old = this.now() - this.after;
    for (const w of this.young) {
      if (w.since > old) break;
      this.young.delete(w);
      const signal = w.req.signal;
      if (signal.aborted) aborted(w);
      else signal.addEventListener("abort", () => aborted(w), { once: true });
    }
    if (this.young.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

function aborted(w: Watched): void {
  if (!w.settled) w.reset(1);
}

function look(w: ResetWatch): void {
  w.look();
}
