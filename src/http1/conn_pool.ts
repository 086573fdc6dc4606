/** Kept-alive connections to one member: LIFO reuse, bounded, idle ones expire. */

import type { Clock } from "../base/mod.ts";
import { Http1Conn } from "./member_conn.ts";
import type { Socket, SocketFactory } from "./types.ts";

/** Settings of a `ConnPool`. */
export interface ConnPoolOptions {
  /**
   * Idle connections kept, default 32. More may sit idle for up to `SURPLUS_GRACE` after a
   * burst (HAProxy purges its surplus the same way): closing and reopening them at once, under
   * a load just above the limit, would cost a connect per request.
   */
  readonly maxIdle?: number;
  /** Idle connections older than this (ms) are closed, default 60 s. */
  readonly idleTimeout?: number;
  /** Time source for idle ages, default `Date.now`. */
  readonly clock?: Clock;
}

const wallClock: Clock = { now: Date.now };

/** How long idle connections beyond `maxIdle` are kept before the sweep closes them (ms). */
export const SURPLUS_GRACE = 1000;

function sweepPool(pool: ConnPool): void {
  pool.sweep();
}

/**
 * The connections to one member. Lives as long as the member (across reloads). `send` takes
 * the most recently used idle connection, or opens one, and gives it back when the response
 * allows keep-alive.
 */
export class ConnPool {
  readonly connector: SocketFactory;
  readonly maxIdle: number;
  readonly idleTimeout: number;
  readonly #clock: Clock;
  /** Oldest first; reuse pops from the end. */
  readonly #idle: Http1Conn[] = [];
  #active = 0;
  #closed = false;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** An idle connection the member closed (or wrote to): out of the pool, closed. */
  readonly #lost = (conn: Http1Conn): void => {
    const i = this.#idle.indexOf(conn);
    if (i >= 0) this.#idle.splice(i, 1);
    conn.close();
  };
  /** The period of the running sweep timer. */
  #period = 0;

  constructor(connector: SocketFactory, options: ConnPoolOptions = {}) {
    this.connector = connector;
    this.maxIdle = options.maxIdle ?? 32;
    this.idleTimeout = options.idleTimeout ?? 60_000;
    this.#clock = options.clock ?? wallClock;
  }

  /** Idle connections kept. */
  get idle(): number {
    return this.#idle.length;
  }

  /** Connections in use (a request or a response body on them). */
  get active(): number {
    return this.#active;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The most recently idled live connection, or null; closes expired ones on the way. */
  acquire(): Http1Conn | null {
    const idle = this.#idle;
    if (idle.length === 0) return null;
    const now = this.#clock.now();
    const conn = idle.pop()!;
    const age = now - conn.idleSince;
    if (age >= this.idleTimeout) {
      // The newest is expired, so all older ones are too.
      conn.close();
      this.closeIdle();
      return null;
    }
    conn.idleFor = age;
    conn.inUse = true;
    this.#active++;
    return conn;
  }

  /** Opens a new connection (counted active). Rejects with `UpstreamError` phase `connect`. */
  async open(timeoutMs: number): Promise<Http1Conn> {
    const conn = this.wrap(await this.connector.connect(timeoutMs));
    conn.inUse = true;
    this.#active++;
    return conn;
  }

  /** The `Http1Conn` of a new socket (a subclass may give it buffers it kept). */
  protected wrap(socket: Socket): Http1Conn {
    return new Http1Conn(socket);
  }

  /** Returns a connection after an exchange; keeps it idle when `reusable` and there is room. */
  release(conn: Http1Conn, reusable: boolean): void {
    if (!conn.inUse) return;
    conn.inUse = false;
    this.#active--;
    if (!reusable || conn.closed || this.#closed || this.maxIdle <= 0 || conn.start !== conn.end) {
      conn.close();
      return;
    }
    conn.start = conn.end = 0;
    conn.timedOut = false;
    conn.upload = null;
    conn.idleSince = this.#clock.now();
    const idle = this.#idle;
    idle.push(conn);
    if (this.connector.watchable === true) conn.watchIdle(this.#lost);
    this.#schedule(idle.length > this.maxIdle);
  }

  /** Runs the sweep timer: every `SURPLUS_GRACE` while there is a surplus, else slower. */
  #schedule(surplus: boolean): void {
    const period = surplus
      ? Math.min(SURPLUS_GRACE, sweepInterval(this.idleTimeout))
      : sweepInterval(this.idleTimeout);
    if (this.#timer !== undefined) {
      if (this.#period <= period) return;
      clearInterval(this.#timer);
    }
    this.#period = period;
    this.#timer = setInterval(sweepPool, period, this);
    Deno.unrefTimer(this.#timer);
  }

  /** Takes a connection out of the pool for good (a 101 upgrade); the caller owns it. */
  detach(conn: Http1Conn): void {
    if (!conn.inUse) return;
    conn.inUse = false;
    this.#active--;
  }

  /**
   * Closes idle connections older than the idle timeout, and the oldest of those beyond
   * `maxIdle` that sat idle for `SURPLUS_GRACE`; stops the timer when none is left.
   */
  sweep(): void {
    const idle = this.#idle;
    const now = this.#clock.now();
    let expired = 0;
    while (
      expired < idle.length &&
      (now - idle[expired].idleSince >= this.idleTimeout ||
        (idle.length - expired > this.maxIdle && now - idle[expired].idleSince >= SURPLUS_GRACE))
    ) {
      idle[expired++].close();
    }
    if (expired > 0) idle.splice(0, expired);
    if (idle.length === 0) this.#stopTimer();
    else if (idle.length <= this.maxIdle && this.#period < sweepInterval(this.idleTimeout)) {
      this.#stopTimer();
      this.#schedule(false);
    }
  }

  /** Closes every idle connection (the member left the pool or its settings changed). */
  closeIdle(): void {
    for (const conn of this.#idle) conn.close();
    this.#idle.length = 0;
    this.#stopTimer();
  }

  /** Closes idle connections now and busy ones when they are returned. */
  close(): void {
    this.#closed = true;
    this.closeIdle();
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      this.#period = 0;
    }
  }
}

/** Half the idle timeout, between 100 ms and 5 s: lazily exact at acquire anyway. */
function sweepInterval(idleTimeout: number): number {
  return Math.min(5000, Math.max(100, idleTimeout / 2));
}
