/**
 * The TCP side of a TLS listener. Deno 2.9.6 neither tells a TLS server a connection's SNI
 * name nor starts server-side TLS on an accepted socket, and its certificate resolver keeps
 * each answer for the listener's life and builds a TLS configuration per handshake (no
 * session resumption, about a third of the handshakes per second). So the public port is a
 * plain TCP listener: the relay reads the ClientHello, takes the SNI name, and passes the
 * bytes on to a fixed-certificate `Deno.listenTls` on loopback, one per certificate. The
 * client's address and SNI name are kept by the loopback port the hop comes from, and the
 * TLS side claims them when it accepts. New certificates mean new loopback listeners and one
 * assignment here: the public socket is never closed, so no connection is refused.
 *
 * @module
 */

import { log } from "../observe/mod.ts";
import {
  FALLBACK_SCSV,
  FOUND,
  HelloResult,
  MAX_CLIENT_HELLO,
  NEED_MORE,
  OFFERS_TLS13,
  readClientHello,
} from "./client_hello.ts";
import type { CertificateSet } from "./sni.ts";
import { handshakeFailed } from "./tls_errors.ts";
import { readServerHello, type TlsSession } from "./server_hello.ts";
import type { TlsLogFields } from "../pipeline/mod.ts";

/** One client connection passed to a loopback TLS listener. */
export class Hop<C> {
  /** Set once the TLS side accepted it (or saw its first request). */
  claimed = false;
  /** Set once it no longer counts as waiting for the TLS side (claimed or ended). */
  settled = false;
  /**
   * The TLS side refused the handshake: what it wrote (its alert) is passed on, then both
   * sockets close, without waiting for the client.
   */
  refused = false;
  /** The client's connection and the loopback one, once both are open. */
  private pair: readonly [Deno.Conn, Deno.Conn] | null = null;
  /** What the ClientHello offered for choosing a certificate (client_hello.ts `offers`). */
  offers = 0;
  /** The ClientHello's legacy_session_id. */
  clientSessionId: Uint8Array = new Uint8Array(0);
  /** What the server's first bytes announced (server_hello.ts); null until seen, or unreadable. */
  session: TlsSession | null = null;
  constructor(
    /** The client's address (`remoteAddr.hostname` of the public connection). */
    readonly peer: string,
    /** The SNI name, lower-case; "" when the client sent none. */
    readonly sni: string,
    /** The loopback port of the TLS listener it goes to. */
    readonly backend: number,
    /** The connection as the listener tracks it from its accept on; null when untracked. */
    readonly client: C | null,
  ) {}

  /** Records the two sockets the relay pumps between. */
  joined(conn: Deno.Conn, up: Deno.Conn): void {
    this.pair = [conn, up];
  }

  /** The access log's TLS fields of this connection. */
  logFields(): TlsLogFields {
    const s = this.session;
    return {
      tls: s?.version ?? "TLS",
      cipher: s?.cipher ?? "-",
      resumed: s?.resumed ?? null,
      sni: this.sni === "" ? "-" : this.sni,
    };
  }

  /** Reads the session from the server's first bytes on their way to the client. */
  serverFirst(b: Uint8Array): void {
    this.session = readServerHello(b, this.clientSessionId);
  }

  /** Closes both sockets: ends the connection, whatever its TLS side is doing. */
  cut(): void {
    if (this.pair === null) return;
    closeQuietly(this.pair[0]);
    closeQuietly(this.pair[1]);
  }
}

/** Where hops go: the certificates and, by certificate index, the loopback TLS ports. */
export interface RelayRoutes {
  readonly certs: CertificateSet;
  readonly ports: readonly number[];
}

/** Options of `TlsRelay`. */
export interface TlsRelayOptions<C> {
  /** The public plain TCP listener; the relay owns it from now on. */
  readonly socket: Deno.Listener;
  /** The listener's name, for the log. */
  readonly name: string;
  readonly routes: RelayRoutes;
  /** The ClientHello must arrive within this (ms): `tls.handshake_timeout`. */
  readonly helloTimeout: () => number;
  /** `tls.unknown_sni`: whether an SNI name no certificate has is refused. */
  readonly refuseUnknown: () => boolean;
  /** Null when accepting may go on, else a promise of a free connection slot. */
  readonly slot: () => Promise<void> | null;
  /** Starts tracking an accepted connection (limits, handshake deadline); null: untracked. */
  readonly admit: (conn: Deno.Conn) => C | null;
  /** Forgets a tracked connection that ended before its TLS side accepted it. */
  readonly drop: (client: C) => void;
}

/** Read buffer towards the client: a TLS record is at most 16 KiB plus overhead. */
const PUMP_BUFFER = 16 * 1024 + 512;
/**
 * A copy that fills its buffer is a bulk transfer (a download): it goes on with one this large,
 * several TLS records per read and write, fewer turns of the event loop per HTTP/2 window. Idle
 * and small connections keep the small one.
 */
const BULK_BUFFER = 128 * 1024;
/** Read buffer from the client (requests are small; bodies take more reads); also the first. */
const CLIENT_BUFFER = 4 * 1024;
const ACCEPT_RETRY = 100;
const LOOPBACK = "127.0.0.1";

function closeQuietly(c: Deno.Conn): void {
  try {
    c.close();
  } catch {
    // already closed
  }
}

/** The alert description `unrecognized_name` (RFC 6066 section 3). */
const UNRECOGNIZED_NAME = 112;
/** The alert description `inappropriate_fallback` (RFC 7507 section 2). */
const INAPPROPRIATE_FALLBACK = 86;

/** Ends a connection whose handshake is refused with a fatal TLS alert (RFC 8446 section 6). */
async function refuse(conn: Deno.Conn, description: number): Promise<void> {
  try {
    await conn.write(new Uint8Array([21, 3, 3, 0, 2, 2, description]));
  } catch {
    // the client left
  }
  closeQuietly(conn);
}

async function writeAll(c: Deno.Conn, b: Uint8Array): Promise<void> {
  let off = 0;
  while (off < b.length) off += await c.write(b.subarray(off));
}

/**
 * Copies `from` to `to` until end of stream, then half-closes `to`; false on an error. `first`
 * sees the first bytes read.
 */
async function pump(
  from: Deno.Conn,
  to: Deno.Conn,
  buf: Uint8Array,
  first: ((b: Uint8Array) => void) | null = null,
): Promise<boolean> {
  try {
    for (;;) {
      const n = await from.read(buf);
      if (n === null) break;
      if (first !== null) {
        first(buf.subarray(0, n));
        first = null;
      }
      await writeAll(to, buf.subarray(0, n));
      if (n === buf.length && n < BULK_BUFFER) buf = new Uint8Array(BULK_BUFFER);
    }
    await (to as Deno.TcpConn).closeWrite();
    return true;
  } catch {
    return false;
  }
}

/** The public half of a TLS listener: accepts, reads the SNI name, hops to loopback TLS. */
export class TlsRelay<C> {
  /** Hops by the loopback port they come from. */
  private readonly hops = new Map<number, Hop<C>>();
  /** Unclaimed hops by loopback TLS port; a retired port closes once it reaches 0. */
  private readonly unclaimed = new Map<number, number>();
  private readonly idle = new Map<number, () => void>();
  /** TLS-side accepts that came before their hop was recorded, by loopback port. */
  private readonly early = new Map<number, (hop: Hop<C> | undefined) => void>();
  private routes: RelayRoutes;
  private closed = false;
  /** Copies from TLS sides to clients still running: a drain waits for them before exiting. */
  private readonly toClients = new Set<Promise<boolean>>();
  /** Accepted connections still reading their ClientHello (not yet handed on). */
  private reading = 0;
  private readonly readWaiters = new Set<() => void>();
  /** Settles when the accept loop has ended. */
  readonly done: Promise<void>;

  constructor(private readonly opts: TlsRelayOptions<C>) {
    this.routes = opts.routes;
    this.done = this.acceptLoop();
  }

  /** The bound public address. */
  get addr(): Deno.NetAddr {
    return this.opts.socket.addr as Deno.NetAddr;
  }

  /** New connections go to `routes` from now on (one assignment). */
  route(routes: RelayRoutes): void {
    this.routes = routes;
  }

  /** The hop a loopback TLS connection from `port` carries, marked claimed; once per hop. */
  claim(port: number): Hop<C> | undefined {
    const hop = this.hops.get(port);
    if (hop !== undefined && !hop.claimed) {
      hop.claimed = true;
      this.settle(hop);
    }
    return hop;
  }

  /**
   * `claim` for a TLS-side accept that may come before the hop is recorded (the loopback
   * connect and the accept settle in either order): undefined after `limit` ms.
   */
  claimSoon(port: number, limit: number): Promise<Hop<C> | undefined> {
    const now = this.claim(port);
    if (now !== undefined) return Promise.resolve(now);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.early.delete(port);
        resolve(undefined);
      }, limit);
      this.early.set(port, (hop) => {
        clearTimeout(timer);
        this.early.delete(port);
        resolve(hop === undefined ? undefined : this.claim(port));
      });
    });
  }

  /**
   * Resolves once no hop to the loopback TLS `ports` waits to be accepted, or after `limit`
   * ms: only then may those listeners close without resetting a client (call after `route`).
   */
  retire(ports: readonly number[], limit: number): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const p of ports) {
      if ((this.unclaimed.get(p) ?? 0) === 0) continue;
      waits.push(new Promise((resolve) => this.idle.set(p, resolve)));
    }
    if (waits.length === 0) return Promise.resolve();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, limit);
    });
    return Promise.race([Promise.all(waits).then(() => {}), late]).finally(() => {
      clearTimeout(timer);
      for (const p of ports) this.idle.delete(p);
    });
  }

  /**
   * Resolves once no connection accepted so far is still reading its ClientHello, or after
   * `limit` ms: after `close`, the loopback listeners may be retired only then (a hop to a
   * closed one would end its client's connection).
   */
  handedOn(limit: number): Promise<void> {
    if (this.reading === 0) return Promise.resolve();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let wake = () => {};
    return new Promise<void>((resolve) => {
      wake = resolve;
      this.readWaiters.add(wake);
      timer = setTimeout(resolve, limit);
    }).finally(() => {
      clearTimeout(timer);
      this.readWaiters.delete(wake);
    });
  }

  private doneReading(): void {
    if (--this.reading > 0) return;
    for (const w of this.readWaiters) w();
  }

  /**
   * Resolves once every byte the TLS sides of the connections open now have written has been
   * passed on to their clients (each TLS side closed): what a drain waits for before the
   * process exits, or the last answers would be lost.
   */
  async flushed(): Promise<void> {
    await Promise.all(this.toClients);
  }

  /** Stops accepting (closes the public socket); hops under way go on. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.opts.socket.close();
    } catch {
      // already closed
    }
  }

  private settle(hop: Hop<C>): void {
    if (hop.settled) return;
    hop.settled = true;
    const backend = hop.backend;
    const left = (this.unclaimed.get(backend) ?? 1) - 1;
    if (left > 0) {
      this.unclaimed.set(backend, left);
      return;
    }
    this.unclaimed.delete(backend);
    const wake = this.idle.get(backend);
    if (wake !== undefined) wake();
  }

  private async acceptLoop(): Promise<void> {
    const socket = this.opts.socket;
    for (;;) {
      const wait = this.opts.slot();
      if (wait !== null) await wait;
      if (this.closed) return;
      let conn: Deno.Conn;
      try {
        conn = await socket.accept();
      } catch (err) {
        if (this.closed) return;
        if (err instanceof Deno.errors.BadResource || err instanceof Deno.errors.Interrupted) {
          return;
        }
        log("error", "accept_failed", { listener: this.opts.name, error: String(err) });
        await new Promise((r) => setTimeout(r, ACCEPT_RETRY));
        continue;
      }
      this.pass(conn).catch(() => closeQuietly(conn));
    }
  }

  /** Reads the ClientHello (bounded in time and size), then hops to the certificate's port. */
  private async pass(conn: Deno.Conn): Promise<void> {
    const peer = (conn.remoteAddr as Deno.NetAddr).hostname ?? "";
    const client = this.opts.admit(conn);
    let hop: Hop<C> | null = null;
    const mark = { reading: true };
    this.reading++;
    try {
      hop = await this.hop(conn, peer, client, mark);
    } finally {
      if (mark.reading) this.doneReading();
      // Until the TLS side accepts it, the connection is the relay's to forget.
      if (client !== null && (hop === null || !hop.claimed)) this.opts.drop(client);
    }
  }

  /** Hops `conn` and pumps until it ends; the hop, or null if it never got that far. */
  private async hop(
    conn: Deno.Conn,
    peer: string,
    client: C | null,
    mark: { reading: boolean },
  ): Promise<Hop<C> | null> {
    let buf = new Uint8Array(CLIENT_BUFFER);
    let len = 0;
    const hello = new HelloResult();
    let late = false;
    const limit = this.opts.helloTimeout();
    const started = performance.now();
    const timer = setTimeout(() => {
      late = true;
      closeQuietly(conn);
    }, limit);
    // Closed at the deadline, by this timer or by the listener's sweep: logged like any failed
    // handshake. A client that closes before sending anything (a TCP health check) is not.
    const timedOut = () => {
      if (!late && performance.now() - started < limit - 10) return;
      const err = `no ClientHello within handshake_timeout (${limit} ms)`;
      handshakeFailed({ listener: this.opts.name, peer, sni: null, err });
    };
    try {
      while (readClientHello(buf, len, hello).state === NEED_MORE) {
        if (len === buf.length) {
          if (buf.length >= MAX_CLIENT_HELLO + 1024) break;
          const bigger = new Uint8Array(MAX_CLIENT_HELLO + 1024);
          bigger.set(buf);
          buf = bigger;
        }
        const n = await conn.read(buf.subarray(len));
        if (n === null) {
          closeQuietly(conn);
          timedOut();
          return null;
        }
        len += n;
      }
    } catch {
      closeQuietly(conn);
      timedOut();
      return null;
    } finally {
      clearTimeout(timer);
    }
    if (late) {
      timedOut();
      return null;
    }
    // Whatever is not a readable ClientHello goes to the first certificate's listener, whose
    // TLS library refuses it with an alert (and the refusal is logged there).
    const sni = hello.state === FOUND ? hello.name : "";
    const routes = this.routes;
    if (hello.state === FOUND && this.opts.refuseUnknown() && !routes.certs.knows(sni)) {
      mark.reading = false;
      this.doneReading();
      await refuse(conn, UNRECOGNIZED_NAME);
      const err = sni === ""
        ? "no SNI name (tls.unknown_sni: refuse)"
        : "no certificate for the SNI name (tls.unknown_sni: refuse)";
      handshakeFailed({ listener: this.opts.name, peer, sni, err });
      return null;
    }
    // RFC 7507: a client that offers less than TLS 1.3 but says it could do more was pushed down
    // (rustls has no TLS_FALLBACK_SCSV; TLS 1.3 clients are covered by its downgrade sentinel).
    if (
      hello.state === FOUND && (hello.offers & (FALLBACK_SCSV | OFFERS_TLS13)) === FALLBACK_SCSV
    ) {
      mark.reading = false;
      this.doneReading();
      await refuse(conn, INAPPROPRIATE_FALLBACK);
      const err = "TLS_FALLBACK_SCSV below TLS 1.3 (inappropriate_fallback)";
      handshakeFailed({ listener: this.opts.name, peer, sni, err });
      return null;
    }
    const backend = routes.ports[routes.certs.indexOf(sni, hello.offers)];
    this.unclaimed.set(backend, (this.unclaimed.get(backend) ?? 0) + 1);
    mark.reading = false;
    this.doneReading();
    const hop = new Hop(peer, sni, backend, client);
    hop.clientSessionId = hello.sessionId;
    hop.offers = hello.offers;
    let up: Deno.TcpConn;
    try {
      up = await Deno.connect({ hostname: LOOPBACK, port: backend });
    } catch (err) {
      this.settle(hop);
      log("error", "tls_hop_failed", { listener: this.opts.name, error: String(err) });
      closeQuietly(conn);
      return hop;
    }
    const key = (up.localAddr as Deno.NetAddr).port;
    hop.joined(conn, up);
    this.hops.set(key, hop);
    this.early.get(key)?.(hop);
    try {
      up.setNoDelay(true);
      (conn as Deno.TcpConn).setNoDelay(true);
      await writeAll(up, buf.subarray(0, len));
    } catch {
      this.end(key, hop, conn, up);
      return hop;
    }
    const back = pump(up, conn, new Uint8Array(PUMP_BUFFER), (b) => hop.serverFirst(b));
    this.toClients.add(back);
    back.then(() => this.toClients.delete(back));
    // A ClientHello that outgrew the first buffer leaves a large one: trade it for a small one.
    const forth = pump(
      conn,
      up,
      buf.length === CLIENT_BUFFER ? buf : new Uint8Array(CLIENT_BUFFER),
    );
    // An error either way ends both; a clean end of one direction waits for the other.
    const first = await Promise.race([back, forth]);
    if (first && !hop.refused) await Promise.all([back, forth]);
    this.end(key, hop, conn, up);
    return hop;
  }

  private end(key: number, hop: Hop<C>, conn: Deno.Conn, up: Deno.Conn): void {
    closeQuietly(conn);
    closeQuietly(up);
    this.hops.delete(key);
    this.settle(hop);
  }
}
