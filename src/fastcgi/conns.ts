/**
 * The connections to one FastCGI server (one PHP-FPM pool's socket): at most `limit` at once,
 * and requests past the limit wait here in arrival order, at most `maxQueue` of them. By
 * default one connection per request, closed at its end (no `FCGI_KEEP_CONN`, as nginx's
 * default): a PHP-FPM worker serves one connection for as long as it stays open, so a kept
 * connection pins a worker that other clients of the pool (its status page, another server)
 * need. With `handoffs` above 1, a connection whose answer ended goes straight to the first
 * waiting request, that many in a row, and is closed when nobody waits (measured against the
 * default in docs/php.md). Not a keep-alive pool: `maxIdle` is 0.
 */

import {
  type Bytes,
  type Connector,
  ConnPool,
  type Expirable,
  Http1Conn,
  type Socket,
  UpstreamError,
  watchdog,
} from "../http1/mod.ts";
import type { HistogramSeries, Metrics, Series } from "../observe/mod.ts";
import { descriptor, forget, lowestFree, setLowWater } from "./low_water.ts";

/**
 * The low-water mark of a TCP connection to the FastCGI server (SO_RCVLOWAT): scalwsd is woken
 * when this much of the answer waits, or when the server closes its side after END_REQUEST,
 * not at every piece PHP writes. The size of the bodies read whole (`SMALL_BODY`).
 */
export const LOW_WATER = 262144;
/**
 * After this long without the answer, a connection's low-water mark goes back to one byte: a
 * slow script's output is read as it comes, and a server that does not close its side after
 * END_REQUEST (against the FastCGI specification) is read at this delay, not at the timeout.
 */
export const LOW_WATER_GRACE = 1000;

/** Connections at once when neither `max_conns` nor PHP-FPM's status says otherwise. */
export const DEFAULT_MAX_CONNS = 8;
/** Requests that may wait for a connection (`max_queue`) unless configured. */
export const DEFAULT_MAX_QUEUE = 256;

/**
 * `pm.max_children` of the PHP-FPM pool behind each address (canonical form), as its status
 * page told (`status_path`, static pools only): the limit of addresses without `max_conns`.
 */
const learned = new Map<string, number>();

/**
 * Requests sent through one address (canonical form), by every `FcgiConns` of it: PHP-FPM's
 * status watch polls often only while they move, and asks to be woken by the next one.
 */
export class FcgiActivity {
  requests = 0;
  /** Called once each by the next request, then forgotten. */
  #next: (() => void)[] = [];

  /** One more request. */
  count(): void {
    this.requests++;
    if (this.#next.length === 0) return;
    const fs = this.#next;
    this.#next = [];
    for (const f of fs) f();
  }

  /** Calls `f` at the next request (once); `cancel` forgets it. */
  onNext(f: () => void): void {
    this.#next.push(f);
  }

  cancel(f: () => void): void {
    const i = this.#next.indexOf(f);
    if (i >= 0) this.#next.splice(i, 1);
  }
}

const activities = new Map<string, FcgiActivity>();

/** The activity of `address` (its canonical form). */
export function activityOf(address: string): FcgiActivity {
  let a = activities.get(address);
  if (a === undefined) activities.set(address, a = new FcgiActivity());
  return a;
}

/** Drops the series of `upstream` (its address or pool left the configuration). */
export function dropFcgiSeries(m: Metrics, upstream: string): void {
  m.fastcgiQueue.remove(upstream);
  m.fastcgiConnections.remove(upstream);
  m.fastcgiQueueWait.remove(upstream);
  m.fastcgiClientGone.remove(upstream, "queued");
  m.fastcgiClientGone.remove(upstream, "running");
}

/**
 * A request's tie to its client: the front calls `leave` when the client went away before the
 * answer; what is armed then runs once (drop the request from the queue, close its FastCGI
 * connection so that PHP-FPM stops the script at its next output, as nginx does).
 */
export class ClientTie {
  gone = false;
  #undo: (() => void) | null = null;

  readonly leave = (): void => {
    if (this.gone) return;
    this.gone = true;
    const f = this.#undo;
    this.#undo = null;
    f?.();
  };

  /** What `leave` undoes from now on (null: nothing). */
  arm(undo: (() => void) | null): void {
    this.#undo = undo;
  }
}

/** The client went away while its request waited or ran: nobody reads the answer. */
export class FcgiClientGone extends Error {
  override readonly name = "FcgiClientGone";
  constructor(readonly queued: boolean) {
    super(queued ? "the client left while its request waited" : "the client left");
  }
}

/** Records what PHP-FPM's status page says about `address`; null forgets it. */
export function learnMaxChildren(address: string, children: number | null): void {
  if (children === null || children < 1) learned.delete(address);
  else learned.set(address, children);
}

/** The queue of one FastCGI address is full: the client gets `503` with `Retry-After`. */
export class FcgiQueueFull extends Error {
  override readonly name = "FcgiQueueFull";
  constructor(readonly queued: number) {
    super(`${queued} requests already wait for a FastCGI connection`);
  }
}

/** No connection came free within the response timeout: `504`, not the server failing. */
export class FcgiQueueTimeout extends UpstreamError {
  constructor(waitedMs: number) {
    super(
      "connect",
      "timeout",
      `waiting ${Math.round(waitedMs)} ms for a FastCGI connection timed out`,
      false,
      true,
    );
  }
}

/** Buffers larger than this are not kept for the next connection. */
const SPARE_MAX = 65536;
/**
 * A new connection's read buffer: an answer up to 64 KiB with its record headers (WordPress's
 * front page, 52 KB; DokuWiki's `wiki:syntax`, 58 KB), which the low-water mark leaves whole in
 * the kernel until PHP-FPM's close, is read at once and copied out once, into a reused buffer
 * with room for the answer's head. With the HTTP/1 client's 16 KiB (grown to 32 KiB), such a
 * page took two reads or more, and its first part was copied out before the second read moved
 * the buffer, into an array allocated afresh (64 KiB), then copied again behind the head.
 */
const READ_BUFFER = SPARE_MAX;
const EMPTY_BUF = new Uint8Array(0);

/** The buffers of a closed connection. */
interface Spare {
  readonly buf: Bytes;
  readonly out: Uint8Array;
}

/**
 * A request waiting for a connection. Its deadline is on the shared watchdog (arming it is a
 * set insert; a `setTimeout` per queued request cost a timer of its own each, 64 at a time).
 */
class Waiter implements Expirable {
  expiresAt = 0;
  readonly since = performance.now();
  /** Admitted or timed out: skipped when it comes up. */
  done = false;

  constructor(
    /** false: not admitted; true: a slot; a connection: a slot with the connection handed over. */
    readonly resolve: (admitted: Admitted) => void,
    /** What the wait's deadline does (the queue's bookkeeping, then `admitLate`). */
    readonly expire: () => void,
  ) {}
}

/** What a wait ends with: false (timed out, or the client left), a slot, or a slot and a connection. */
export type Admitted = boolean | Http1Conn;

/** Settings of `FcgiConns`. */
export interface FcgiConnsOptions {
  /** The canonical address (where learned limits are found). */
  readonly address: string;
  /** Connections at once; 0 (default) uses PHP-FPM's `pm.max_children` when known, else 8. */
  readonly maxConns?: number;
  /** Requests that may wait; default 256. */
  readonly maxQueue?: number;
  /** Counts its requests in the address's `FcgiActivity`; default true (not the status watch). */
  readonly counted?: boolean;
  /**
   * Requests one connection may carry, handed from each to the next queued one (`handOff`);
   * default 1: a connection per request (see docs/php.md for why).
   */
  readonly handoffs?: number;
}

/** What the metrics see of one upstream (shared by the members of a pool). */
export interface FcgiSeries {
  readonly queue: Series;
  readonly connections: Series;
  readonly wait: HistogramSeries;
  readonly goneQueued: Series;
  readonly goneRunning: Series;
}

/** A connection to a FastCGI server: its descriptor while its low-water mark is raised. */
class FcgiConn extends Http1Conn {
  /** The descriptor whose SO_RCVLOWAT is raised, or -1. */
  fd = -1;
  grace: LowWaterGrace | null = null;
}

/** Lowers a connection's mark `LOW_WATER_GRACE` after its connect (a slow script). */
class LowWaterGrace implements Expirable {
  expiresAt = 0;
  constructor(readonly conn: FcgiConn) {}

  expire(): void {
    lowerWater(this.conn);
  }
}

/** Back to waking at any byte (the descriptor is still the connection's: it is not closed). */
function lowerWater(conn: FcgiConn): void {
  if (conn.fd < 0 || conn.closed) return;
  if (conn.grace !== null) watchdog.disarm(conn.grace);
  setLowWater(conn.fd, 1);
  conn.fd = -1;
}

function admitLate(w: Waiter): void {
  if (w.done) return;
  w.done = true;
  w.resolve(false);
}

/** One FastCGI address's connections, bounded, with its queue. Lives across reloads. */
export class FcgiConns extends ConnPool {
  readonly address: string;
  /** Configured limit; 0 for the learned one or the default. */
  maxConns: number;
  maxQueue: number;
  /** Slots taken: requests holding (or opening) a connection. */
  busy = 0;
  /** Waiters still waiting. */
  waiting = 0;
  series: FcgiSeries | null = null;
  /** The address's activity, or null when its requests are not counted. */
  readonly activity: FcgiActivity | null;
  readonly #queue: Waiter[] = [];
  #head = 0;
  /**
   * Read and write buffers of closed connections, taken by the next ones: a connection per
   * request would otherwise allocate 20 KiB per request (a quarter of scalwsd's CPU went to
   * the garbage collector under DokuWiki before).
   */
  readonly #spare: Spare[] = [];
  /** Requests one connection may carry (1: a connection per request). */
  readonly handoffs: number;
  /** Requests each connection carried, when more than one. */
  readonly #uses = new WeakMap<Http1Conn, number>();
  /**
   * Connections get the low-water mark: TCP (a Unix socket's readiness ignores it), each closed
   * by the server after its answer (not handed on with `FCGI_KEEP_CONN`).
   */
  readonly #lowWater: boolean;

  constructor(connector: Connector, options: FcgiConnsOptions) {
    super(connector, { maxIdle: 0 });
    this.address = options.address;
    this.activity = options.counted === false ? null : activityOf(options.address);
    this.handoffs = options.handoffs ?? 1;
    this.#lowWater = this.handoffs <= 1 &&
      (connector as { address?: { kind: string } }).address?.kind === "tcp";
    this.maxConns = options.maxConns ?? 0;
    this.maxQueue = options.maxQueue ?? DEFAULT_MAX_QUEUE;
  }

  /**
   * Reports into the series of `upstream` (the address, or the pool's name: a pool's members
   * add up in one series). Once; the series stay with the object.
   */
  attach(m: Metrics, upstream: string): void {
    if (this.series !== null) return;
    const s: FcgiSeries = {
      queue: m.fastcgiQueue.with(upstream),
      connections: m.fastcgiConnections.with(upstream),
      wait: m.fastcgiQueueWait.with(upstream),
      goneQueued: m.fastcgiClientGone.with(upstream, "queued"),
      goneRunning: m.fastcgiClientGone.with(upstream, "running"),
    };
    s.queue.value += this.waiting;
    s.connections.value += this.active;
    this.series = s;
  }

  /** Connections allowed at once now. */
  get limit(): number {
    return this.maxConns > 0 ? this.maxConns : learned.get(this.address) ?? DEFAULT_MAX_CONNS;
  }

  /** Takes a slot when one is free and nobody waits (arrival order). */
  tryEnter(): boolean {
    this.activity?.count();
    if (this.waiting > 0 || this.busy >= this.limit) return false;
    this.busy++;
    this.series?.wait.observe(0);
    return true;
  }

  /**
   * Waits for a slot in arrival order: true once it holds one, false when `timeoutMs` passed
   * first or the client left (`tie`: it is then dropped from the queue and counted). Throws
   * `FcgiQueueFull` at once when `maxQueue` requests already wait.
   */
  wait(timeoutMs: number, tie?: ClientTie): Promise<Admitted> {
    if (this.waiting >= this.maxQueue) throw new FcgiQueueFull(this.waiting);
    return new Promise<Admitted>((resolve) => {
      const w: Waiter = new Waiter(resolve, () => {
        if (w.done) return;
        this.waiting--;
        if (this.series !== null) this.series.queue.value--;
        admitLate(w);
      });
      watchdog.arm(w, timeoutMs);
      this.#queue.push(w);
      this.waiting++;
      if (this.series !== null) this.series.queue.value++;
      tie?.arm(() => this.#drop(w));
    });
  }

  /** The client of a waiter left: out of the queue, never sent. */
  #drop(w: Waiter): void {
    if (w.done) return;
    watchdog.disarm(w);
    this.waiting--;
    const s = this.series;
    if (s !== null) {
      s.queue.value--;
      s.goneQueued.value++;
    }
    admitLate(w);
  }

  /**
   * The client of a request holding a slot left: its connection closes, counted as `running`
   * when the request was `sent` (else as `queued`: it never reached the application). A sent
   * one's slot comes back after the events already here: when many clients leave at once (a
   * load stops), the queued ones are dropped before this slot could send one of them.
   */
  abandoned(conn: Http1Conn, sent: boolean): void {
    if (!conn.inUse) return;
    const s = this.series;
    if (s !== null) (sent ? s.goneRunning : s.goneQueued).value++;
    this.drop(conn);
    if (sent) setTimeout(() => this.leave(), 0);
    else this.leave();
  }

  /** Gives a slot back: the first waiter takes it (and any the limit now allows). */
  leave(): void {
    this.busy--;
    while (this.waiting > 0 && this.busy < this.limit) {
      const w = this.#next();
      if (w === null) break;
      this.busy++;
      this.#admit(w, true);
    }
  }

  #admit(w: Waiter, with_: Admitted): void {
    w.done = true;
    watchdog.disarm(w);
    this.waiting--;
    const s = this.series;
    if (s !== null) {
      s.queue.value--;
      s.wait.observe((performance.now() - w.since) / 1000);
    }
    w.resolve(with_);
  }

  /**
   * Hands `conn` (its answer read whole, sent with `FCGI_KEEP_CONN`) with its slot to the
   * first waiter: PHP-FPM's worker takes the next request at once, with no connect and no
   * accept. True when handed; false when nobody waits, the connection carried `handoffs`
   * requests, or the limit went down (the caller then closes it).
   */
  handOff(conn: Http1Conn): boolean {
    if (this.waiting === 0 || this.busy > this.limit || conn.closed || conn.start !== conn.end) {
      return false;
    }
    const uses = (this.#uses.get(conn) ?? 1) + 1;
    if (uses > this.handoffs) return false;
    const w = this.#next();
    if (w === null) return false;
    this.#uses.set(conn, uses);
    conn.idleFor = 0;
    conn.start = conn.end = 0;
    this.#admit(w, conn);
    return true;
  }

  #next(): Waiter | null {
    const q = this.#queue;
    while (this.#head < q.length) {
      const w = q[this.#head++];
      if (!w.done) {
        if (this.#head > 1024 && this.#head * 2 > q.length) {
          q.splice(0, this.#head);
          this.#head = 0;
        }
        return w;
      }
    }
    q.length = 0;
    this.#head = 0;
    return null;
  }

  override async open(timeoutMs: number): Promise<Http1Conn> {
    // The number the socket most likely gets: found by that, not by a search of every descriptor.
    const hint = this.#lowWater ? lowestFree() : -1;
    const conn = await super.open(timeoutMs) as FcgiConn;
    if (this.#lowWater) {
      const fd = descriptor(conn.socket, hint);
      if (fd >= 0 && setLowWater(fd, LOW_WATER)) {
        conn.fd = fd;
        watchdog.arm(conn.grace ??= new LowWaterGrace(conn), LOW_WATER_GRACE);
      }
    }
    if (this.series !== null) this.series.connections.value++;
    return conn;
  }

  /** A new socket gets the buffers of a closed connection when one left them. */
  protected override wrap(socket: Socket): Http1Conn {
    const spare = this.#spare.pop();
    return spare === undefined
      ? new FcgiConn(socket, new Uint8Array(READ_BUFFER))
      : new FcgiConn(socket, spare.buf, spare.out);
  }

  /**
   * The answer on `conn` streams from now on (larger than the bodies read whole): each piece is
   * read as it comes (the low-water mark back to one byte).
   */
  streams(conn: Http1Conn): void {
    lowerWater(conn as FcgiConn);
  }

  /** Keeps `conn`'s buffers for the next connection unless they grew large. */
  #reclaim(conn: Http1Conn): void {
    if (
      this.#spare.length >= this.limit || conn.out.buf.length > SPARE_MAX ||
      conn.buf.length > SPARE_MAX
    ) return;
    this.#spare.push({ buf: conn.buf, out: conn.out.buf });
    conn.buf = EMPTY_BUF;
  }

  /** Ends an exchange: the connection closes and its slot goes to the next waiter. */
  override release(conn: Http1Conn, _reusable: boolean): void {
    if (!conn.inUse) return;
    this.drop(conn);
    this.leave();
  }

  /**
   * Ends an exchange that ended well (END_REQUEST read, no read pending, the answer copied out
   * of the read buffer): handed to a waiter, or closed with its buffers kept for the next one.
   */
  finished(conn: Http1Conn): void {
    if (!conn.inUse) return;
    if (this.handOff(conn)) return;
    this.drop(conn);
    this.#reclaim(conn);
    this.leave();
  }

  /** Closes a connection but keeps its slot (the request is sent again on a new one). */
  drop(conn: Http1Conn): void {
    if (!conn.inUse) return;
    const c = conn as FcgiConn;
    if (c.fd >= 0) {
      if (c.grace !== null) watchdog.disarm(c.grace);
      forget(c.fd);
      c.fd = -1;
    }
    super.release(conn, false);
    if (this.series !== null) this.series.connections.value--;
  }
}
