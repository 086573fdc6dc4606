/**
 * Which HTTP/2 streams a client reset while their handler worked (rapid reset), watched only
 * once a handler has been at work for `WATCH_AFTER` ms. Reading a Deno.serve request's `signal`
 * costs an async op per request and, on Deno 2.9.6 (legacy abort), a `DOMException` and an
 * abort event when the answer is sent: about 10 us of a proxied HTTP/2 request's CPU in a
 * profile of `h2load -c64 -m1`. A handler that answers sooner costs what a request costs
 * whether or not its stream was reset, so only slower ones are watched; one timer looks at
 * them (a reset before the look shows as an aborted signal then).
 *
 * It is not the count itself (`ClientConn.resetSeen`) nor what follows (GOAWAY, listener.ts).
 *
 * @module
 */

/** A handler at work this long (ms) is watched for its stream's reset. */
export const WATCH_AFTER = 50;

/** One request whose handler works. */
class Pending {
  /** Its handler's answer settled: an abort now is Deno's legacy one after the answer. */
  settled = false;
  constructor(
    readonly req: Request,
    readonly since: number,
    readonly onReset: () => void,
    private readonly young: Set<Pending>,
  ) {}

  /** The signal aborted: a reset while the handler works (after, Deno's legacy abort). */
  aborted(): void {
    if (!this.settled) this.onReset();
  }

  readonly done = (res: Response): Response => {
    this.settled = true;
    this.young.delete(this);
    return res;
  };

  readonly failed = (err: unknown): never => {
    this.settled = true;
    this.young.delete(this);
    throw err;
  };
}

/** The requests at work, oldest first, and the one timer that watches the slow ones. */
export class ResetWatch {
  private readonly young = new Set<Pending>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly after = WATCH_AFTER,
  ) {}

  /** Requests not looked at yet. */
  get waiting(): number {
    return this.young.size;
  }

  /**
   * `res`, calling `onReset` if the client resets the stream while its handler works, once the
   * handler has worked `WATCH_AFTER` ms (earlier resets are seen then).
   */
  watch(req: Request, res: Promise<Response>, onReset: () => void): Promise<Response> {
    const p = new Pending(req, this.now(), onReset, this.young);
    this.young.add(p);
    if (this.timer === undefined) {
      this.timer = setInterval(look, this.after, this);
      Deno.unrefTimer(this.timer as unknown as number);
    }
    return res.then(p.done, p.failed);
  }

  /** Watches the signal of every request at work for `WATCH_AFTER` ms or more. */
  look(): void {
    const old = this.now() - this.after;
    for (const p of this.young) {
      if (p.since > old) break;
      this.young.delete(p);
      const signal = p.req.signal;
      if (signal.aborted) p.aborted();
      else signal.addEventListener("abort", () => p.aborted(), { once: true });
    }
    if (this.young.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

function look(w: ResetWatch): void {
  w.look();
}
