/** Kept-alive connections to one member: LIFO reuse, bounded, idle ones expire. */

import type { Clock } from "../upstream/types.ts";
import { Http1Conn } from "./connection.ts";
import type { SocketFactory } from "./types.ts";

/** Settings of a `ConnPool`. */
export interface ConnPoolOptions {
  /** Idle connections kept, default 32; when full, the oldest is closed. */
  readonly maxIdle?: number;
  /** Idle connections older than this (ms) are closed, default 60 s. */
  readonly idleTimeout?: number;
  /** Time source for idle ages, default `Date.now`. */
  readonly clock?: Clock;
}

const wallClock: Clock = { now: Date.now };

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
    const conn = new Http1Conn(await this.connector.connect(timeoutMs));
    conn.inUse = true;
    this.#active++;
    return conn;
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
    conn.bodyReader = null;
    conn.idleSince = this.#clock.now();
    const idle = this.#idle;
    if (idle.length >= this.maxIdle) idle.shift()!.close();
    idle.push(conn);
    if (this.#timer === undefined) {
      this.#timer = setInterval(sweepPool, sweepInterval(this.idleTimeout), this);
      Deno.unrefTimer(this.#timer);
    }
  }

  /** Takes a connection out of the pool for good (a 101 upgrade); the caller owns it. */
  detach(conn: Http1Conn): void {
    if (!conn.inUse) return;
    conn.inUse = false;
    this.#active--;
  }

  /** Closes idle connections older than the idle timeout; stops the timer when none is left. */
  sweep(): void {
    const idle = this.#idle;
    const now = this.#clock.now();
    let expired = 0;
    while (expired < idle.length && now - idle[expired].idleSince >= this.idleTimeout) {
      idle[expired++].close();
    }
    if (expired > 0) idle.splice(0, expired);
    if (idle.length === 0) this.#stopTimer();
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
    }
  }
}

/** Half the idle timeout, between 100 ms and 5 s: lazily exact at acquire anyway. */
function sweepInterval(idleTimeout: number): number {
  return Math.min(5000, Math.max(100, idleTimeout / 2));
}
