/**
 * The process's open client connections (`ConnTracker`): counts per peer (`limit_conn`) and in all
 * (`max_connections`), and one timer that closes connections past their handshake, header-read or
 * idle timeout, and HTTP/2 connections told GOAWAY that stay. Requests only touch counters.
 *
 * @module
 */

import type { LimitsConfig } from "../config/mod.ts";
import {
  type ClientConn,
  GOING_AWAY,
  HANDSHAKE,
  LINGER,
  LINGERING,
  SERVING,
} from "./client_conn.ts";

/**
 * How long an HTTP/2 connection told GOAWAY may stay open with no stream left (ms): the client
 * answers hyper's PING, gets the final GOAWAY and closes; one that does not is closed then.
 */
export const GOAWAY_GRACE = 1000;

/** The sweep runs at a quarter of the shortest timeout, between these bounds (ms). */
const MIN_TICK = 5;
const MAX_TICK = 1000;

function sweep(t: ConnTracker): void {
  t.sweep();
}

/**
 * Every open client connection of the process: counts per peer address (`limit_conn`) and in
 * all (`max_connections`), and one timer that closes connections past `handshake_timeout`,
 * `header_read_timeout` or `idle_timeout`. Requests only touch counters; the timer does the
 * rest.
 */
export class ConnTracker {
  private readonly conns = new Set<ClientConn>();
  private readonly perPeer = new Map<string, number>();
  private readonly waiters: (() => void)[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;
  private tick = 0;

  constructor(
    /** The limits in force (the current generation's). */
    private readonly limits: () => LimitsConfig,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Open connections. */
  get size(): number {
    return this.conns.size;
  }

  /** Adds `c`; returns how many connections its peer has open now, `c` included. */
  add(c: ClientConn): number {
    this.conns.add(c);
    const n = (this.perPeer.get(c.peer) ?? 0) + 1;
    this.perPeer.set(c.peer, n);
    this.schedule(c);
    return n;
  }

  /** Forgets `c` (idempotent); wakes an accept loop waiting for a free slot. */
  remove(c: ClientConn): void {
    if (!this.conns.delete(c)) return;
    const n = (this.perPeer.get(c.peer) ?? 1) - 1;
    if (n === 0) this.perPeer.delete(c.peer);
    else this.perPeer.set(c.peer, n);
    if (this.conns.size === 0) this.stop();
    this.waiters.shift()?.();
  }

  /** Null when fewer than `max` connections are open (or `max` is 0), else a wait for one. */
  slot(max: number): Promise<void> | null {
    if (max <= 0 || this.conns.size < max) return null;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Wakes every accept loop waiting for a slot (a listener is closing); they check again. */
  wakeAll(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Closes the connections whose allowance ran out. */
  sweep(): void {
    const now = this.now();
    const lim = this.limits();
    for (const c of this.conns) {
      if (c.phase === HANDSHAKE || c.phase === LINGERING) {
        if (now >= c.deadline) c.close();
      } else if (c.phase === GOING_AWAY) {
        if (now >= c.deadline && (c.active === 0 || c.abusive)) c.close();
      } else if (c.phase === SERVING && c.active === 0) {
        const limit = c.requests === 0 ? lim.header_read_timeout : lim.idle_timeout;
        if (limit > 0 && now - c.idleSince >= limit) {
          // HTTP/2 gets GOAWAY first; HTTP/1.1 is simply closed.
          if (c.h2) c.goAway(now + GOAWAY_GRACE);
          else c.close();
        }
      }
    }
    if (this.tick !== this.wantedTick(undefined)) this.stop();
    if (this.conns.size > 0 && this.timer === undefined) this.start(this.wantedTick(undefined));
  }

  private wantedTick(c: ClientConn | undefined): number {
    const lim = this.limits();
    let shortest = Infinity;
    if (lim.header_read_timeout > 0) shortest = lim.header_read_timeout;
    if (lim.idle_timeout > 0 && lim.idle_timeout < shortest) shortest = lim.idle_timeout;
    const hs = c?.tls?.handshakeTimeout ?? Infinity;
    if (hs < shortest) shortest = hs;
    if (LINGER < shortest) shortest = LINGER;
    if (this.tick > 0 && this.tick * 4 < shortest) shortest = this.tick * 4;
    return Math.min(MAX_TICK, Math.max(MIN_TICK, Math.floor(shortest / 4)));
  }

  private schedule(c: ClientConn): void {
    const tick = this.wantedTick(c);
    if (this.timer !== undefined && tick >= this.tick) return;
    this.stop();
    this.start(tick);
  }

  private start(tick: number): void {
    this.tick = tick;
    this.timer = setInterval(sweep, tick, this);
    Deno.unrefTimer(this.timer);
  }

  private stop(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.tick = 0;
  }
}
