/**
 * Keep-alive clients that count every request as answered, never sent, or failed, per phase of
 * a test (the drain tests: `tests/drain_test.ts`, `bench/drain_soak.ts`).
 *
 * - `FetchLoops`: Deno's `fetch` one request after another per loop, through a few HTTP clients
 *   (hyper's keep-alive pool). A connect error is "never sent"; any other error a failure
 *   (hyper resends on its own only a request it had not written).
 * - `RawLoops`: raw HTTP/1.1 keep-alive connections as curl and wrk use them: a read stays
 *   pending while a connection is idle, so a close by the server is seen before the next write
 *   (then the request goes on a new connection: "never sent"); once the request is written, an
 *   end, reset or timeout before the whole response is a failure. `Connection: close` is
 *   honoured.
 */

import { sleep } from "./wait.ts";

/** One phase's totals. */
export interface PhaseTally {
  /** Requests answered 200 in full. */
  ok: number;
  /** Requests not sent: the connection was refused, or closed before the request was written. */
  unsent: number;
  /** Requests written (or fetched) that got no complete 200 answer. */
  failed: number;
  /** The first failures. */
  readonly errors: string[];
}

/** Totals per phase name; `phase` is where requests started now are counted. */
export class Tally {
  phase = "start";
  readonly phases = new Map<string, PhaseTally>();
  /** Bodies seen and how often. */
  readonly bodies = new Map<string, number>();

  of(phase: string): PhaseTally {
    let t = this.phases.get(phase);
    if (t === undefined) {
      t = { ok: 0, unsent: 0, failed: 0, errors: [] };
      this.phases.set(phase, t);
    }
    return t;
  }

  ok(phase: string, body: string): void {
    this.of(phase).ok++;
    this.bodies.set(body, (this.bodies.get(body) ?? 0) + 1);
  }

  unsent(phase: string): void {
    this.of(phase).unsent++;
  }

  failed(phase: string, why: string): void {
    const t = this.of(phase);
    t.failed++;
    if (t.errors.length < 20) t.errors.push(`${new Date().toISOString()} ${why}`);
  }

  get totalOk(): number {
    let n = 0;
    for (const t of this.phases.values()) n += t.ok;
    return n;
  }

  get totalFailed(): number {
    let n = 0;
    for (const t of this.phases.values()) n += t.failed;
    return n;
  }

  /** `phase: ok N, unsent N, failed N` lines. */
  lines(): string[] {
    return [...this.phases].map(([p, t]) =>
      `${p}: ok ${t.ok}, unsent ${t.unsent}, failed ${t.failed}` +
      (t.errors.length > 0 ? ` (${t.errors.slice(0, 3).join("; ")})` : "")
    );
  }
}

/** Options of both clients. */
export interface LoopOptions {
  readonly port: number;
  /** Host header of the raw loops (fetch sends the URL's); default `example.test`. */
  readonly host?: string;
  /** Concurrent loops; default 4. */
  readonly loops?: number;
  /** Pause between two requests of one loop, ms; default 1. */
  readonly pauseMs?: number;
  /** Per request, ms; default 5000. */
  readonly timeoutMs?: number;
}

/** A connect error (nothing was sent) as Deno's fetch reports it. */
function isConnectError(err: unknown): boolean {
  const cause = (err as { cause?: unknown })?.cause;
  return /client error \(Connect\)|tcp connect error/.test(String(cause ?? err));
}

/** `fetch` loops sharing `clients` HTTP clients (their keep-alive pools). */
export class FetchLoops {
  private stopped = false;
  private readonly tasks: Promise<void>[] = [];
  private readonly clients: Deno.HttpClient[] = [];

  constructor(private readonly tally: Tally, private readonly o: LoopOptions, clients = 2) {
    for (let i = 0; i < clients; i++) this.clients.push(Deno.createHttpClient({}));
  }

  start(): this {
    const n = this.o.loops ?? 4;
    for (let i = 0; i < n; i++) this.tasks.push(this.loop(this.clients[i % this.clients.length]));
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.tasks);
    for (const c of this.clients) c.close();
  }

  private async loop(client: Deno.HttpClient): Promise<void> {
    const url = `http://127.0.0.1:${this.o.port}/`;
    const timeout = this.o.timeoutMs ?? 5_000;
    while (!this.stopped) {
      const phase = this.tally.phase;
      try {
        const res = await fetch(url, { client, signal: AbortSignal.timeout(timeout) });
        const body = await res.text();
        if (res.status === 200) this.tally.ok(phase, body);
        else this.tally.failed(phase, `fetch: status ${res.status}`);
      } catch (err) {
        if (isConnectError(err)) {
          this.tally.unsent(phase);
          await sleep(10);
        } else {
          const cause = (err as { cause?: unknown })?.cause;
          this.tally.failed(phase, `fetch: ${err} ${cause ?? ""}`);
        }
      }
      await sleep(this.o.pauseMs ?? 1);
    }
  }
}

const enc = new TextEncoder();
const dec = new TextDecoder();

function headEnd(b: Uint8Array, n: number): number {
  for (let i = 3; i < n; i++) {
    if (b[i] === 10 && b[i - 1] === 13 && b[i - 2] === 10 && b[i - 3] === 13) return i + 1;
  }
  return -1;
}

/** One raw keep-alive connection and the read left pending while it is idle. */
class RawConn {
  /** Result of the pending read once settled: bytes, 0 for the end, -1 for an error. */
  settled: number | null = null;
  pending: Promise<number>;
  readonly buf = new Uint8Array(16_384);

  constructor(readonly conn: Deno.TcpConn) {
    this.pending = this.readAt(0);
  }

  readAt(at: number): Promise<number> {
    this.settled = null;
    const p = this.conn.read(this.buf.subarray(at)).then((n) => n ?? 0, () => -1);
    p.then((n) => (this.settled = n));
    return p;
  }

  close(): void {
    try {
      this.conn.close();
    } catch { /* closed */ }
  }
}

/** Raw HTTP/1.1 keep-alive loops (curl and wrk's way), `reconnectEvery` requests per connection. */
export class RawLoops {
  private stopped = false;
  private readonly tasks: Promise<void>[] = [];
  private readonly request: Uint8Array;

  constructor(
    private readonly tally: Tally,
    private readonly o: LoopOptions & { readonly reconnectEvery?: number },
  ) {
    this.request = enc.encode(`GET / HTTP/1.1\r\nhost: ${o.host ?? "example.test"}\r\n\r\n`);
  }

  start(): this {
    for (let i = 0; i < (this.o.loops ?? 4); i++) this.tasks.push(this.loop());
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.tasks);
  }

  private async loop(): Promise<void> {
    let c: RawConn | null = null;
    let used = 0;
    const every = this.o.reconnectEvery ?? 0;
    while (!this.stopped) {
      const phase = this.tally.phase;
      // A close seen while idle: the request goes on a new connection (curl checks the same).
      if (c !== null && c.settled !== null) {
        c.close();
        c = null;
      }
      if (c === null) {
        try {
          c = new RawConn(await Deno.connect({ hostname: "127.0.0.1", port: this.o.port }));
          used = 0;
        } catch {
          this.tally.unsent(phase);
          await sleep(10);
          continue;
        }
      }
      const keep = await this.exchange(c, phase);
      used++;
      if (!keep || (every > 0 && used >= every)) {
        c.close();
        c = null;
      }
      await sleep(this.o.pauseMs ?? 1);
    }
    c?.close();
  }

  /** One request on `c`; whether the connection may carry another. */
  private async exchange(c: RawConn, phase: string): Promise<boolean> {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      c.close();
    }, this.o.timeoutMs ?? 5_000);
    try {
      try {
        await c.conn.write(this.request);
      } catch (err) {
        this.tally.failed(phase, `raw: write: ${err}`);
        return false;
      }
      let n = 0;
      let end = -1;
      let need = -1;
      for (;;) {
        const r = await c.pending;
        if (r <= 0) {
          const what = timedOut ? "timeout" : r === 0 ? "end" : "reset";
          this.tally.failed(phase, `raw: ${what} after ${n} response bytes`);
          return false;
        }
        n += r;
        if (end < 0) {
          end = headEnd(c.buf, n);
          if (end >= 0) {
            const m = /\r\ncontent-length: *(\d+)/i.exec(dec.decode(c.buf.subarray(0, end)));
            if (m === null) {
              this.tally.failed(phase, "raw: no content-length");
              return false;
            }
            need = end + Number(m[1]);
          }
        }
        if (end >= 0 && n >= need) break;
        if (n === c.buf.length) {
          this.tally.failed(phase, "raw: response too large");
          return false;
        }
        c.pending = c.readAt(n);
      }
      const head = dec.decode(c.buf.subarray(0, end));
      if (!head.startsWith("HTTP/1.1 200 ")) {
        this.tally.failed(phase, `raw: status ${head.slice(9, 12)}`);
        return false;
      }
      this.tally.ok(phase, dec.decode(c.buf.subarray(end, need)));
      if (/\r\nconnection: *close\r\n/i.test(head)) return false;
      // Idle from here: the next read learns of a close before the next write.
      c.pending = c.readAt(0);
      return true;
    } finally {
      clearTimeout(timer);
    }
  }
}
