/**
 * A small Redis client for scalwsd's shared state: a few connections (TCP or Unix socket), each
 * pipelined (commands issued in the same tick go out in one write, replies are matched in
 * order), calls that give up after a deadline without waiting for the reply, and a connection
 * that fails or stalls closed and opened again with backoff while calls fail at once. Not a
 * general client: no pub/sub, no transactions, no RESP3.
 */
import { encodeCommand, RespProtocolError, RespReader, type RespValue } from "./resp.ts";

/** Where Redis listens: `host:port` or `unix:/path`. */
export type RedisAddress =
  | { readonly kind: "tcp"; readonly hostname: string; readonly port: number }
  | { readonly kind: "unix"; readonly path: string };

/** Why a call did not get its reply. */
export type RedisFailure = "timeout" | "connect" | "closed" | "protocol" | "down";

/** A call that did not get its reply; `reason` says why. */
export class RedisCallError extends Error {
  override readonly name = "RedisCallError";
  constructor(readonly reason: RedisFailure, message: string) {
    super(message);
  }
}

interface Pending {
  readonly resolve: (v: RespValue) => void;
  readonly reject: (e: RedisCallError) => void;
  readonly deadline: number;
  settled: boolean;
}

const READ_SIZE = 16 * 1024;

/** One pipelined connection. */
class Connection {
  readonly #conn: Deno.Conn;
  readonly #reader = new RespReader();
  readonly #queue: Pending[] = [];
  #out: Uint8Array[] = [];
  #writing = false;
  #closed = false;
  #onClose: () => void;

  constructor(conn: Deno.Conn, onClose: () => void) {
    this.#conn = conn;
    this.#onClose = onClose;
    this.#readLoop();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Calls waiting for their reply (settled ones still hold their place in the order). */
  get waiting(): number {
    return this.#queue.length;
  }

  call(args: readonly string[], deadline: number): Promise<RespValue> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ resolve, reject, deadline, settled: false });
      this.#out.push(encodeCommand(args));
      if (!this.#writing) {
        this.#writing = true;
        queueMicrotask(() => this.#flush());
      }
    });
  }

  async #flush(): Promise<void> {
    try {
      while (this.#out.length > 0 && !this.#closed) {
        const chunks = this.#out;
        this.#out = [];
        let bytes: Uint8Array;
        if (chunks.length === 1) bytes = chunks[0];
        else {
          let n = 0;
          for (const c of chunks) n += c.length;
          bytes = new Uint8Array(n);
          let at = 0;
          for (const c of chunks) {
            bytes.set(c, at);
            at += c.length;
          }
        }
        let done = 0;
        while (done < bytes.length) done += await this.#conn.write(bytes.subarray(done));
      }
    } catch {
      this.close("closed");
    } finally {
      this.#writing = false;
    }
  }

  async #readLoop(): Promise<void> {
    const buf = new Uint8Array(READ_SIZE);
    try {
      for (;;) {
        const n = await this.#conn.read(buf);
        if (n === null) break;
        this.#reader.push(buf.subarray(0, n));
        for (let r = this.#reader.next(); r !== undefined; r = this.#reader.next()) {
          const p = this.#queue.shift();
          if (p === undefined) throw new RespProtocolError("a reply nobody asked for");
          if (!p.settled) {
            p.settled = true;
            p.resolve(r.value);
          }
        }
      }
      this.close("closed");
    } catch (err) {
      this.close(err instanceof RespProtocolError ? "protocol" : "closed");
    }
  }

  /**
   * When this connection next needs a look: the deadline of its first call still waiting, or,
   * when every waiting call has failed already, the moment its oldest reply would be `stuckAfter`
   * late. Infinity when nothing waits.
   */
  nextCheck(stuckAfter: number): number {
    const q = this.#queue;
    if (q.length === 0) return Infinity;
    for (const p of q) if (!p.settled) return p.deadline;
    return q[0].deadline + stuckAfter + 1;
  }

  /** Fails the calls past `now`; true when the oldest reply is so late the link is stuck. */
  expire(now: number, stuckAfter: number): boolean {
    for (const p of this.#queue) {
      if (p.deadline > now) break;
      if (!p.settled) {
        p.settled = true;
        p.reject(new RedisCallError("timeout", "no reply within the timeout"));
      }
    }
    const oldest = this.#queue[0];
    return oldest !== undefined && now - oldest.deadline > stuckAfter;
  }

  close(reason: RedisFailure): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#conn.close();
    } catch { /* already closed */ }
    for (const p of this.#queue.splice(0)) {
      if (p.settled) continue;
      p.settled = true;
      p.reject(new RedisCallError(reason, `connection ${reason}`));
    }
    this.#onClose();
  }
}

/** How a `RedisPool` behaves; times in milliseconds. */
export interface RedisPoolOptions {
  readonly address: RedisAddress;
  /** A call's deadline. */
  readonly timeout: number;
  /** Connections used in turn; default 2. */
  readonly connections?: number;
  /** First wait after a failed connect; doubles up to `maxBackoff`. Default 50 ms. */
  readonly minBackoff?: number;
  /** Default 500 ms: Redis that comes back is used again within about half a second. */
  readonly maxBackoff?: number;
  /** Milliseconds now (injected for tests); default `performance.now`. */
  readonly now?: () => number;
}

/** The pool's view of Redis, for the admin API and logs. */
export interface RedisPoolState {
  readonly state: "up" | "connecting" | "down";
  readonly connections: number;
  /** Calls waiting for a reply. */
  readonly waiting: number;
  /** The last failure, while down. */
  readonly lastError?: string;
}

/** A few pipelined connections to one Redis, opened on first use and again after failures. */
export class RedisPool {
  readonly #o: Required<RedisPoolOptions>;
  readonly #conns: (Connection | undefined)[];
  readonly #opening: (Promise<Connection> | undefined)[];
  #turn = 0;
  #downUntil = 0;
  #backoff: number;
  #lastError: string | undefined;
  /** Fires at the earliest deadline of a waiting call (`#sweepAt`), so none waits past it. */
  #sweeper: ReturnType<typeof setTimeout> | undefined;
  #sweepAt = Infinity;
  #closed = false;

  constructor(o: RedisPoolOptions) {
    this.#o = {
      connections: 2,
      minBackoff: 50,
      maxBackoff: 500,
      now: () => performance.now(),
      ...o,
    };
    this.#conns = new Array(this.#o.connections).fill(undefined);
    this.#opening = new Array(this.#o.connections).fill(undefined);
    this.#backoff = this.#o.minBackoff;
  }

  /** True while a failed connect's backoff runs: calls fail at once with reason `down`. */
  get down(): boolean {
    return this.#o.now() < this.#downUntil;
  }

  state(): RedisPoolState {
    const open = this.#conns.filter((c) => c !== undefined && !c.closed) as Connection[];
    const waiting = open.reduce((n, c) => n + c.waiting, 0);
    const state = this.down ? "down" : open.length > 0 ? "up" : "connecting";
    return {
      state,
      connections: open.length,
      waiting,
      ...(state === "down" && this.#lastError !== undefined ? { lastError: this.#lastError } : {}),
    };
  }

  /**
   * Sends one command; its reply, or a `RedisCallError` at `deadline` (on this pool's clock;
   * default `timeout` from now: a second call for the same decision passes the first's).
   */
  call(args: readonly string[], deadline = this.#o.now() + this.#o.timeout): Promise<RespValue> {
    if (this.#closed) return Promise.reject(new RedisCallError("closed", "the pool is closed"));
    if (this.down) {
      return Promise.reject(new RedisCallError("down", `redis is down: ${this.#lastError}`));
    }
    const i = this.#turn;
    this.#turn = (i + 1) % this.#conns.length;
    const c = this.#conns[i];
    if (c !== undefined && !c.closed) {
      const reply = c.call(args, deadline);
      this.#sweepBy(deadline);
      return reply;
    }
    return this.#open(i).then(
      (conn) => {
        if (this.#o.now() >= deadline) {
          throw new RedisCallError("timeout", "no reply within the timeout");
        }
        const reply = conn.call(args, deadline);
        this.#sweepBy(deadline);
        return reply;
      },
    );
  }

  #open(i: number): Promise<Connection> {
    const busy = this.#opening[i];
    if (busy !== undefined) return busy;
    const a = this.#o.address;
    const timeout = this.#o.timeout;
    const p = (async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let late = false;
      try {
        const dial = a.kind === "unix"
          ? Deno.connect({ transport: "unix", path: a.path })
          : Deno.connect({ hostname: a.hostname, port: a.port });
        // A dial that loses the race may still connect later: close it then.
        dial.then((c) => late && c.close(), () => {});
        const conn = await Promise.race([
          dial,
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => {
              late = true;
              reject(new Error(`connect timed out after ${timeout}ms`));
            }, timeout);
          }),
        ]);
        if (a.kind === "tcp") (conn as Deno.TcpConn).setNoDelay(true);
        const made = new Connection(conn, () => {
          if (this.#conns[i] === made) this.#conns[i] = undefined;
        });
        this.#conns[i] = made;
        this.#backoff = this.#o.minBackoff;
        this.#lastError = undefined;
        return made;
      } catch (err) {
        this.#lastError = err instanceof Error ? err.message : String(err);
        this.#downUntil = this.#o.now() + this.#backoff;
        this.#backoff = Math.min(this.#backoff * 2, this.#o.maxBackoff);
        throw new RedisCallError("connect", `cannot connect to redis: ${this.#lastError}`);
      } finally {
        clearTimeout(timer);
        this.#opening[i] = undefined;
      }
    })();
    this.#opening[i] = p;
    return p;
  }

  /**
   * Makes sure a sweep runs by `at` (a call's deadline). Deadlines come in order, so while a
   * sweep is armed this is one comparison; a timer per call would cost more.
   */
  #sweepBy(at: number): void {
    if (this.#sweeper !== undefined && this.#sweepAt <= at) return;
    clearTimeout(this.#sweeper);
    this.#sweepAt = at;
    this.#sweeper = setTimeout(() => this.#sweep(), Math.max(0, at - this.#o.now()));
    Deno.unrefTimer(this.#sweeper);
  }

  #sweep(): void {
    this.#sweeper = undefined;
    this.#sweepAt = Infinity;
    if (this.#closed) return;
    const now = this.#o.now();
    const stuckAfter = 4 * this.#o.timeout;
    let next = Infinity;
    for (const c of this.#conns) {
      if (c === undefined || c.closed) continue;
      // A reply four timeouts late: the link is stuck; close it so the next call reconnects.
      if (c.expire(now, stuckAfter)) c.close("timeout");
      else next = Math.min(next, c.nextCheck(stuckAfter));
    }
    if (next !== Infinity) this.#sweepBy(next);
  }

  /** Closes every connection; waiting calls fail with reason `closed`. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#sweeper);
    this.#sweeper = undefined;
    for (const c of this.#conns) c?.close("closed");
  }
}
