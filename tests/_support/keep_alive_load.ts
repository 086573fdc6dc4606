/**
 * A small keep-alive load client for the controller tests: a few connections to 127.0.0.1
 * sending GETs one after another with a short pause (steady, bounded load), reconnecting every
 * `reconnectEvery` requests so new instances get connections, and honouring
 * `Connection: close`.
 *
 * A request whose connection closed or reset before any byte of the response arrived is sent
 * again on a new connection (at most twice), as HTTP clients do for idempotent requests (RFC
 * 9110 §9.2.2, RFC 9112 §9.3.1); those resends are counted in `retried`. Anything else is a
 * failure: an error after part of the response, a status other than 200, a timeout, a third
 * failed attempt.
 */

import { sleep } from "./wait.ts";

export interface LoadStats {
  ok: number;
  failed: number;
  retried: number;
  /** The first failures and resends, for messages. */
  readonly errors: string[];
  /** Response bodies seen and how often. */
  readonly bodies: Map<string, number>;
}

export interface LoadOptions {
  /** Default 4. */
  readonly connections?: number;
  /** Host header; default `example.test`. */
  readonly host?: string;
  /** Pause between requests on one connection in ms; default 2. */
  readonly pauseMs?: number;
  /** Default 50. */
  readonly reconnectEvery?: number;
  /** Per request, default 5000 ms. */
  readonly timeoutMs?: number;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

function indexOfHeadEnd(b: Uint8Array, n: number): number {
  for (let i = 3; i < n; i++) {
    if (b[i] === 10 && b[i - 1] === 13 && b[i - 2] === 10 && b[i - 3] === 13) return i + 1;
  }
  return -1;
}

class Attempt {
  gotBytes = false;
  timedOut = false;
}

/** Steady keep-alive load against `127.0.0.1:port` until `stop()`. */
export class KeepAliveLoad implements AsyncDisposable {
  readonly stats: LoadStats = { ok: 0, failed: 0, retried: 0, errors: [], bodies: new Map() };
  private stopped = false;
  private readonly tasks: Promise<void>[] = [];
  private readonly request: Uint8Array;
  private readonly opts: Required<LoadOptions>;

  constructor(private readonly port: number, opts: LoadOptions = {}) {
    this.opts = {
      connections: opts.connections ?? 4,
      host: opts.host ?? "example.test",
      pauseMs: opts.pauseMs ?? 2,
      reconnectEvery: opts.reconnectEvery ?? 50,
      timeoutMs: opts.timeoutMs ?? 5_000,
    };
    this.request = enc.encode(`GET / HTTP/1.1\r\nhost: ${this.opts.host}\r\n\r\n`);
  }

  start(): this {
    for (let i = 0; i < this.opts.connections; i++) this.tasks.push(this.loop());
    return this;
  }

  /** Stops after the requests in flight; returns the totals. */
  async stop(): Promise<LoadStats> {
    this.stopped = true;
    await Promise.all(this.tasks);
    return this.stats;
  }

  /** Stops, as `stop()` does, when a test ends early. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  private note(kind: "failed" | "retried", msg: string): void {
    this.stats[kind]++;
    if (this.stats.errors.length < 50) this.stats.errors.push(`${kind}: ${msg}`);
  }

  private async loop(): Promise<void> {
    const buf = new Uint8Array(16384);
    let conn: Deno.TcpConn | null = null;
    let used = 0;
    const drop = () => {
      try {
        conn?.close();
      } catch { /* already closed */ }
      conn = null;
    };
    while (!this.stopped) {
      for (let attempt = 1;; attempt++) {
        const a = new Attempt();
        try {
          if (conn === null) {
            conn = await Deno.connect({ hostname: "127.0.0.1", port: this.port });
            used = 0;
          }
          const keep = await this.exchange(conn, buf, a);
          used++;
          if (!keep || used >= this.opts.reconnectEvery) drop();
          break;
        } catch (err) {
          drop();
          const msg = a.timedOut ? "timeout" : String((err as Error)?.message ?? err);
          if (!a.gotBytes && !a.timedOut && attempt < 3) {
            this.note("retried", `attempt ${attempt}: ${msg}`);
            continue;
          }
          this.note("failed", `attempt ${attempt}: ${msg}`);
          break;
        }
      }
      await sleep(this.opts.pauseMs);
    }
    drop();
  }

  /** One request and its response; returns whether the connection may be reused. */
  private async exchange(conn: Deno.TcpConn, buf: Uint8Array, a: Attempt): Promise<boolean> {
    const timer = setTimeout(() => {
      a.timedOut = true;
      try {
        conn.close();
      } catch { /* closed */ }
    }, this.opts.timeoutMs);
    try {
      await conn.write(this.request);
      let n = 0;
      let headEnd = -1;
      let need = -1;
      for (;;) {
        const r = await conn.read(buf.subarray(n));
        if (r === null) {
          throw new Error(a.gotBytes ? "connection closed mid-response" : "connection closed");
        }
        a.gotBytes = true;
        n += r;
        if (headEnd < 0) {
          headEnd = indexOfHeadEnd(buf, n);
          if (headEnd < 0) {
            if (n === buf.length) throw new Error("response head too large");
            continue;
          }
          const head = dec.decode(buf.subarray(0, headEnd)).toLowerCase();
          const m = /\r\ncontent-length: *(\d+)/.exec(head);
          if (m === null) throw new Error(`no content-length: ${head.slice(0, 80)}`);
          need = headEnd + Number(m[1]);
          if (need > buf.length) throw new Error("response too large");
        }
        if (n >= need) {
          const head = dec.decode(buf.subarray(0, headEnd));
          const body = dec.decode(buf.subarray(headEnd, need));
          this.stats.bodies.set(body, (this.stats.bodies.get(body) ?? 0) + 1);
          if (!head.startsWith("HTTP/1.1 200 ")) {
            this.note("failed", `status ${head.slice(9, 12)}`);
          } else {
            this.stats.ok++;
          }
          return !/\r\nconnection: *close\r\n/i.test(head);
        }
      }
    } finally {
      clearTimeout(timer);
    }
  }
}
