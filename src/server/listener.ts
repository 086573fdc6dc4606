/**
 * One configured listener (`Listener`): binds its public socket, terminates TLS (directly or
 * relayed through loopback TLS listeners chosen by SNI), tracks connections and their timeouts,
 * and serves HTTP/1.1 with scalwsd's own front and HTTP/2 with Deno.serve, handing each request's
 * session to the dispatcher. Reload swaps its certificates without closing the public socket.
 *
 * @module
 */

import { ConfigError, type ListenerConfig, loadCertificates } from "../config/mod.ts";
import { log } from "../observe/mod.ts";
import { ClientConn, CLOSED, HANDSHAKE, LINGERING, SERVING, type TlsState } from "./client_conn.ts";
import { ConnTracker, GOAWAY_GRACE } from "./conn_tracker.ts";
import { serveConnection, type ServedConnection } from "./deno_internal.ts";
import type { Dispatcher } from "./dispatcher.ts";
import { type Policy, redirectPolicy, type TlsLogFields } from "../pipeline/mod.ts";
import { CertificateSet } from "./sni.ts";
import { type Hop, TlsRelay } from "./tls_relay.ts";
import { handshakeFailed, LogBudget } from "./tls_errors.ts";
import { hostSupport, listenDirect, logTermination, termination } from "./tls_direct.ts";
import { DRAIN_IDLE_GRACE, FrontConnection } from "../front/mod.ts";
import { noDelayOnListeners } from "./tcp_nodelay.ts";
import { FrontServe } from "./front_conn.ts";
import { ServeSession } from "./serve_session.ts";
import { ResetWatch } from "./reset_watch.ts";
import type { AcmeManager } from "../acme/mod.ts";

/** Pause after an accept error such as EMFILE before trying again (ms). */
const ACCEPT_RETRY = 100;
/** How long a rebind waits for the old socket to be released (ms). */
const REBIND_FOR = 2000;
/** The loopback TLS listeners behind a TLS listener's relay. */
const LOOPBACK = "127.0.0.1";
/** The access log's TLS fields on a direct listener: Deno says nothing of the session. */
const DIRECT_TLS_LOG: TlsLogFields = { tls: "TLS", cipher: "-", resumed: null, sni: "-" };
/** ALPN offered by every TLS listener, in order of preference. */
const ALPN = ["h2", "http/1.1"];
/**
 * How long retired loopback TLS listeners wait at most for connections handed to them but not
 * yet accepted (ms); each is counted when accepted, so this bounds only a stuck accept.
 */
const RETIRE_WAIT = 10_000;

/**
 * What a TLS accept loop serves with: a loopback TLS listener's (kept listeners get the new
 * state), or a direct listener's public socket (`direct`).
 */
interface BackendState {
  tls: TlsState;
  /** The public socket terminates TLS itself (tls_direct.ts): accepts wait for a slot. */
  direct?: boolean;
}

/** The loopback TLS listeners of one certificate set, one per certificate. */
interface Loopbacks {
  readonly tls: TlsState;
  readonly ports: number[];
  readonly sockets: Deno.TlsListener[];
  readonly states: BackendState[];
}

const trackers = new WeakMap<Dispatcher, ConnTracker>();

/** The process's connection tracker: one per dispatcher, living as long as the server. */
function trackerOf(d: Dispatcher): ConnTracker {
  let t = trackers.get(d);
  if (t === undefined) {
    t = new ConnTracker(() => d.current.config.server.limits);
    trackers.set(d, t);
  }
  return t;
}

function onError(err: unknown): Response {
  log("error", "request_failed", { error: String(err) });
  return new Response("Internal Server Error\n", { status: 500 });
}

const OVER_LIMIT_HEADERS = {
  "content-type": "text/plain; charset=utf-8",
  "retry-after": "1",
  connection: "close",
};

/** The answer on a connection over `limit_conn`; the connection closes after it. */
function overConnLimit(c: ClientConn, info: Deno.ServeHandlerInfo<Deno.Addr>): Response {
  c.requestStarted();
  info.completed.then(c.lingerOn, c.lingerOn);
  return new Response("Too Many Requests: too many connections from this address\n", {
    status: 429,
    headers: OVER_LIMIT_HEADERS,
  });
}

const abuseLog = new LogBudget();
/** HTTP/2 requests at work, watched for resets once slow (reset_watch.ts). */
const resets = new ResetWatch();

/**
 * An HTTP/2 connection whose client reset more than `max_resets_per_second` streams within a
 * second (rapid reset): GOAWAY, and closed at the end of `GOAWAY_GRACE` whatever is in flight.
 * Logged as `http2_abuse` (warn), at most 10 lines per 10 s.
 */
function tooManyResets(c: ClientConn, listener: string, max: number): void {
  if (c.abusive) return;
  c.abusive = true;
  const now = performance.now();
  c.goAway(now + GOAWAY_GRACE);
  if (!abuseLog.take(now)) return;
  const fields: Record<string, unknown> = {
    listener,
    peer: c.peer,
    reason: `more than ${max} streams reset within a second`,
  };
  if (abuseLog.suppressed > 0) {
    fields.suppressed = abuseLog.suppressed;
    abuseLog.suppressed = 0;
  }
  log("warn", "http2_abuse", fields);
}

/**
 * Reads and checks a TLS listener's certificates; throws `ConfigError` naming its path. The
 * certificate of `tls.acme` (issued, or a placeholder when it is the only one) comes first.
 */
function tlsStateOf(
  cfg: ListenerConfig,
  file: string,
  index: number,
  acme: AcmeManager | null,
): TlsState | null {
  const tls = cfg.tls;
  if (tls === undefined) return null;
  const errors: string[] = [];
  const path = `server.listeners[${index}].tls`;
  const certs = loadCertificates(tls.certificates, path, Deno.readTextFileSync, errors, []);
  if (certs === undefined) throw new ConfigError(file, errors);
  const ordered = tls.acme !== undefined && acme !== null
    ? acme.certificatesFor(tls.acme, tls.certificates.length === 0)
    : [];
  const all = [...ordered, ...certs];
  if (all.length === 0) throw new ConfigError(file, [`${path}: no certificate to serve yet`]);
  return {
    certs: new CertificateSet(all),
    strict: tls.strict_sni,
    handshakeTimeout: tls.handshake_timeout,
    unknownSni: tls.unknown_sni,
    relay: null,
  };
}

/**
 * One configured listener, plain HTTP or TLS (certificate by SNI, ALPN `h2` and `http/1.1`).
 *
 * A TLS listener is a TCP relay (`tls_relay.ts`) on the public port that reads each
 * connection's SNI name and hands it to a fixed-certificate TLS listener on loopback, one per
 * certificate: the request path knows the SNI name (strict SNI), sessions resume, and new
 * certificates are new loopback listeners while the public socket stays open.
 *
 * It accepts connections itself and serves each on its own, so that it can time out
 * handshakes, slow request heads and idle keep-alive connections, count connections per peer
 * and pause accepting at `max_connections`: HTTP/1.1 (plain, or TLS whose ALPN chose it) with
 * scalwsd's own front (`src/front/`, WebSocket tunnels included), HTTP/2 with Deno.serve's
 * per-connection server. Implements what `Server` used of `Deno.HttpServer`.
 */
export class Listener {
  /** The bound address (port 0 resolved). */
  addr: Deno.NetAddr;
  /**
   * The public socket: plain TCP, also for relayed TLS listeners (their relay reads it); a
   * `Deno.listenTls` for a direct one.
   */
  private socket: Deno.Listener;
  private tls: TlsState | null;
  /** How TLS is terminated (tls_direct.ts); "relay" for plain listeners too. */
  private mode: "direct" | "relay" = "relay";
  /**
   * Every socket of this listener is bound with SO_REUSEPORT and the kernel migrates pending
   * connections of a closed one (tcp_migrate_req): a new socket is bound beside the old before
   * it closes, refusing nothing.
   */
  private readonly beside: boolean;
  /** A TLS listener's relay and its current loopback TLS listeners; null for plain HTTP. */
  private relay: TlsRelay<ClientConn> | null = null;
  private loopbacks: Loopbacks | null = null;
  private readonly retiring: Promise<void>[] = [];
  private cfg: ListenerConfig;
  /**
   * `redirect` of the listener: every request gets it; null for a listener that routes. Read
   * per request by the connections' `FrontServe` (reloads change it).
   */
  redirect: Policy | null;
  private readonly mine = new Set<ClientConn>();
  private readonly tracker: ConnTracker;
  private closed = false;
  private loops: Promise<void>[] = [];
  /** The accept loop of the public socket (a TLS listener's: its relay's). */
  private accepting: Promise<void> = Promise.resolve();
  /** TLS handshakes under way: a drain lets them finish (for `GOAWAY_GRACE` at most). */
  private readonly handshakes = new Set<Promise<void>>();
  private readonly dispatcher: Dispatcher;
  private readonly reusePort: boolean;
  /** Certificates ordered for `tls.acme`; null: none (tests, `scalwsd check`). */
  private readonly acme: AcmeManager | null;

  /** Binds `cfg` (the listener at `index` of the configuration in `file`). */
  constructor(o: {
    readonly cfg: ListenerConfig;
    readonly dispatcher: Dispatcher;
    readonly reusePort: boolean;
    readonly file: string;
    readonly index: number;
    readonly acme?: AcmeManager | null;
  }) {
    const cfg = o.cfg;
    this.cfg = cfg;
    this.dispatcher = o.dispatcher;
    this.reusePort = o.reusePort;
    this.acme = o.acme ?? null;
    this.redirect = cfg.redirect ? redirectPolicy(cfg.redirect) : null;
    this.tracker = trackerOf(o.dispatcher);
    this.tls = tlsStateOf(cfg, o.file, o.index, this.acme);
    const host = hostSupport();
    this.beside = host.migrateReq && host.reusePort;
    this.mode = this.modeOf(this.tls);
    if (this.beside && !this.reusePort) this.probe(cfg.port);
    this.socket = this.bind(cfg.port);
    this.addr = this.socket.addr as Deno.NetAddr;
    this.start();
  }

  /** How `tls` is terminated here; logged (`tls_termination`) for TLS listeners. */
  private modeOf(tls: TlsState | null): "direct" | "relay" {
    if (tls === null) return "relay";
    const t = termination(tls.certs, hostSupport(), tls.unknownSni);
    logTermination(this.cfg.name, t);
    return t.mode;
  }

  /**
   * Fails as a plain bind would when another process holds the port: with SO_REUSEPORT on
   * every socket, a second scalwsd would otherwise share the port silently.
   */
  private probe(port: number): void {
    if (port === 0) return;
    const host = this.cfg.hostname;
    Deno.listen({ hostname: host.startsWith("[") ? host.slice(1, -1) : host, port }).close();
  }

  private start(): void {
    const tls = this.tls;
    if (tls === null) {
      this.accepting = this.acceptLoop(this.socket, null);
      this.loops.push(this.accepting);
      return;
    }
    if (this.mode === "direct") {
      this.accepting = this.acceptLoop(this.socket, { tls, direct: true });
      this.loops.push(this.accepting);
      return;
    }
    const loopbacks = this.bindLoopbacks(tls);
    this.loopbacks = loopbacks;
    const tracker = this.tracker;
    const d = this.dispatcher;
    const relay = new TlsRelay({
      socket: this.socket,
      name: this.cfg.name,
      routes: { certs: tls.certs, ports: loopbacks.ports },
      helloTimeout: () => this.tls?.handshakeTimeout ?? 10_000,
      refuseUnknown: () => this.tls?.unknownSni === "refuse",
      slot: () => tracker.slot(d.current.config.server.limits.max_connections),
      admit: (conn) => this.admit(conn),
      drop: (c) => this.forget(c),
    });
    this.relay = relay;
    tls.relay = relay;
    this.accepting = relay.done;
    this.loops.push(relay.done);
  }

  /**
   * Binds a fixed-certificate TLS listener on loopback per certificate of `tls`. A certificate
   * and key that `reuse` already serves keep their listener (it serves with `tls` from now on),
   * and with it the TLS sessions it can resume: renewing one certificate of a listener does not
   * cost the others' returning clients a full handshake.
   */
  private bindLoopbacks(tls: TlsState, reuse: Loopbacks | null = null): Loopbacks {
    const b: Loopbacks = { tls, ports: [], sockets: [], states: [] };
    const taken = new Set<number>();
    const fresh: Deno.TlsListener[] = [];
    try {
      for (const pair of tls.certs.pairs) {
        const old = reuse?.tls.certs.pairs.findIndex((p, i) =>
          !taken.has(i) && p.cert === pair.cert && p.key === pair.key
        ) ?? -1;
        if (old >= 0) {
          taken.add(old);
          const state = reuse!.states[old];
          b.sockets.push(reuse!.sockets[old]);
          b.ports.push(reuse!.ports[old]);
          b.states.push(state);
          continue;
        }
        const l = Deno.listenTls({
          hostname: LOOPBACK,
          port: 0,
          cert: pair.cert,
          key: pair.key,
          alpnProtocols: ALPN,
        });
        fresh.push(l);
        noDelayOnListeners((l.addr as Deno.NetAddr).port);
        const state = { tls };
        b.sockets.push(l);
        b.ports.push((l.addr as Deno.NetAddr).port);
        b.states.push(state);
        this.loops.push(this.acceptLoop(l, state));
      }
    } catch (err) {
      this.closeSockets(fresh);
      throw err;
    }
    // Only now, once nothing can fail: the kept listeners serve with the new state.
    for (const state of b.states) state.tls = tls;
    return b;
  }

  private closeSockets(sockets: readonly Deno.TlsListener[]): void {
    for (const l of sockets) {
      try {
        l.close();
      } catch {
        // already closed
      }
    }
  }

  /**
   * Closes the listeners of `b` that `next` did not keep, once every connection handed to them
   * was accepted.
   */
  private retire(
    b: Loopbacks,
    next: Loopbacks | null = null,
    relay: TlsRelay<ClientConn> | null = this.relay,
  ): Promise<void> {
    const kept = new Set(next?.sockets ?? []);
    const ports = b.ports.filter((_, i) => !kept.has(b.sockets[i]));
    const sockets = b.sockets.filter((l) => !kept.has(l));
    const wait = relay === null ? Promise.resolve() : relay.retire(ports, RETIRE_WAIT);
    const done = wait.then(() => this.closeSockets(sockets));
    this.retiring.push(done);
    return done;
  }

  /**
   * The public socket for the current `tls` and `mode`; a TLS listener's with TCP_NODELAY
   * (tcp_nodelay.ts), which what it accepts inherits.
   */
  private bind(port: number): Deno.Listener {
    const host = this.cfg.hostname;
    const hostname = host.startsWith("[") ? host.slice(1, -1) : host;
    let l: Deno.Listener;
    if (this.tls !== null && this.mode === "direct") {
      l = listenDirect(hostname, port, this.tls.certs, ALPN);
    } else {
      // reusePort needs --unstable-net; the controller's instances ask for it, and `beside`.
      l = this.reusePort || this.beside
        ? Deno.listen({ hostname, port, reusePort: true } as Deno.TcpListenOptions)
        : Deno.listen({ hostname, port });
    }
    if (this.tls !== null) noDelayOnListeners((l.addr as Deno.NetAddr).port);
    return l;
  }

  /**
   * Applies a reloaded configuration of this address. New certificates on a TLS listener are
   * new loopback TLS listeners behind the same public socket (a certificate and key that stay
   * keep theirs, and their sessions): no connection is refused, new
   * connections get the new certificates, accepted ones keep what they negotiated. A switch
   * between plain and TLS needs a new socket: the old one closes and the new one binds the
   * same port as soon as Deno lets go of the old (a few ms, during which connection attempts
   * are refused).
   */
  async update(cfg: ListenerConfig, file: string, index: number): Promise<void> {
    const next = tlsStateOf(cfg, file, index, this.acme);
    const before = this.tls;
    this.cfg = cfg;
    this.redirect = cfg.redirect ? redirectPolicy(cfg.redirect) : null;
    const same = next === null
      ? before === null
      : before !== null && before.certs.fingerprint === next.certs.fingerprint &&
        (this.mode === "relay" || next.unknownSni === "first");
    if (same) {
      if (next !== null && before !== null) {
        // Settings only: servers and connections keep the object they were given.
        before.strict = next.strict;
        before.handshakeTimeout = next.handshakeTimeout;
        before.unknownSni = next.unknownSni;
      }
      return;
    }
    const relay = this.relay;
    if (this.beside) {
      this.replaceBeside(cfg, next);
      return;
    }
    if (next !== null && before !== null && relay !== null) {
      this.reloadRelayed(cfg, next, relay);
      return;
    }
    this.tls = next;
    if (relay !== null) {
      relay.close();
      this.relay = null;
      if (this.loopbacks !== null) this.retire(this.loopbacks);
      this.loopbacks = null;
    } else this.socket.close();
    // The old socket is released once its pending accept is cancelled, a tick later.
    const deadline = Date.now() + REBIND_FOR;
    for (;;) {
      await new Promise((r) => setTimeout(r, 1));
      try {
        this.socket = this.bind(this.addr.port);
        break;
      } catch (err) {
        if (!(err instanceof Deno.errors.AddrInUse) || Date.now() > deadline) {
          log("error", "listener_lost", { listener: cfg.name, error: String(err) });
          throw err;
        }
      }
    }
    this.addr = this.socket.addr as Deno.NetAddr;
    this.start();
    log("info", "listener_rebound", { listener: cfg.name, tls: next !== null });
  }

  /**
   * New certificates on a relayed listener that stays relayed: the public socket stays, the
   * loopback listeners are rebound beside the old ones (kept where unchanged) and the old ones
   * retire once their connections are handed over.
   */
  private reloadRelayed(cfg: ListenerConfig, next: TlsState, relay: TlsRelay<ClientConn>): void {
    const old = this.loopbacks!;
    this.tls = next;
    next.relay = relay;
    this.loopbacks = this.bindLoopbacks(next, old);
    relay.route({ certs: next.certs, ports: this.loopbacks.ports });
    this.retire(old, this.loopbacks);
    const kept = this.loopbacks.ports.filter((p) => old.ports.includes(p)).length;
    log("info", "tls_certificates_loaded", { listener: cfg.name, kept });
  }

  /**
   * Where the kernel moves pending connections of a closed socket: a new public socket (TLS
   * direct or relayed, or plain) is bound on the same port beside the old one, which then
   * closes. No connection is refused, whatever changes. A relayed TLS listener whose
   * certificates change and stay relayed keeps its socket (`update`).
   */
  private replaceBeside(cfg: ListenerConfig, next: TlsState | null): void {
    const before = this.tls;
    const mode = this.modeOf(next);
    if (next !== null && before !== null && this.mode === "relay" && mode === "relay") {
      this.reloadRelayed(cfg, next, this.relay!);
      return;
    }
    const [oldSocket, oldRelay, oldLoopbacks] = [this.socket, this.relay, this.loopbacks];
    this.tls = next;
    this.mode = mode;
    this.socket = this.bind(this.addr.port);
    this.relay = null;
    this.loopbacks = null;
    this.start();
    if (oldRelay !== null) {
      oldRelay.close();
      // Its loopback listeners close once what it accepted has been handed to them.
      if (oldLoopbacks !== null) {
        const handed = oldRelay.handedOn(this.tls?.handshakeTimeout ?? RETIRE_WAIT);
        this.retiring.push(handed.then(() => this.retire(oldLoopbacks, null, oldRelay)));
      }
    } else {
      try {
        oldSocket.close();
      } catch {
        // already closed
      }
    }
    if (next !== null && before !== null) {
      log("info", "tls_certificates_loaded", { listener: cfg.name, kept: 0 });
    } else log("info", "listener_rebound", { listener: cfg.name, tls: next !== null });
  }

  /**
   * Accepts on the public socket (plain HTTP, or TLS terminated there: `at.direct`) or on a
   * loopback TLS listener (`at`).
   */
  private async acceptLoop(socket: Deno.Listener, at: BackendState | null): Promise<void> {
    const outside = at === null || at.direct === true;
    for (;;) {
      if (outside) {
        // A TLS listener's relay waits for a slot before it accepts.
        const wait = this.tracker.slot(
          this.dispatcher.current.config.server.limits.max_connections,
        );
        if (wait !== null) await wait;
        if (this.closed || socket !== this.socket) return;
      }
      let conn: Deno.Conn;
      try {
        conn = await socket.accept();
      } catch (err) {
        if (this.closed || (outside && socket !== this.socket)) return;
        if (err instanceof Deno.errors.BadResource || err instanceof Deno.errors.Interrupted) {
          return;
        }
        log("error", "accept_failed", { listener: this.cfg.name, error: String(err) });
        await new Promise((r) => setTimeout(r, ACCEPT_RETRY));
        continue;
      }
      this.open(conn, at === null ? null : at.tls);
    }
  }

  /**
   * Starts tracking a connection the TLS relay accepted: it counts for `limit_conn` and
   * `max_connections`, and `handshake_timeout` runs, from the TCP accept on.
   */
  private admit(conn: Deno.Conn): ClientConn | null {
    const tls = this.tls;
    if (tls === null) return null;
    const c = this.track(conn, (conn.remoteAddr as Deno.NetAddr).hostname ?? "", tls);
    c.deadline = performance.now() + tls.handshakeTimeout;
    return c;
  }

  private track(conn: Deno.Conn, peer: string, tls: TlsState | null): ClientConn {
    const c = new ClientConn(conn, peer, tls, performance.now());
    c.port = this.addr.port;
    c.address = (conn.localAddr as Deno.NetAddr).hostname ?? "";
    c.peerPort = (conn.remoteAddr as Deno.NetAddr).port ?? 0;
    const gen = this.dispatcher.current;
    const perPeer = this.tracker.add(c);
    this.mine.add(c);
    const limit = gen.config.server.limit_conn;
    if (limit !== undefined && perPeer > limit && !gen.trusted(peer)) c.overLimit = true;
    return c;
  }

  private open(conn: Deno.Conn, tls: TlsState | null): void {
    if (tls === null) {
      this.serve(this.track(conn, (conn.remoteAddr as Deno.NetAddr).hostname ?? "", null));
      return;
    }
    const relay = tls.relay;
    if (relay === null) {
      // Terminated on the public socket: no hop, no SNI name.
      this.handshake(conn, tls, null);
      return;
    }
    const port = (conn.remoteAddr as Deno.NetAddr).port;
    const hop = relay.claim(port);
    if (hop !== undefined) this.handshake(conn, tls, hop);
    else {
      // The loopback connect and this accept settle in either order.
      relay.claimSoon(port, tls.handshakeTimeout).then((h) => {
        if (h === undefined) conn.close();
        else this.handshake(conn, tls, h);
      });
    }
  }

  /**
   * A TLS connection was accepted (the TLS side of a hop, or on a direct listener's public
   * socket: `hop` null): its handshake runs within the connection's deadline.
   */
  private handshake(conn: Deno.Conn, tls: TlsState, hop: Hop<ClientConn> | null): void {
    const peer = hop?.peer ?? (conn.remoteAddr as Deno.NetAddr).hostname ?? "";
    const sni = hop?.sni ?? null;
    let c = hop?.client ?? null;
    if (c === null) {
      c = this.track(conn, peer, tls);
      c.deadline = performance.now() + tls.handshakeTimeout;
      c.direct = hop === null;
    } else if (c.phase === CLOSED) {
      // Timed out meanwhile.
      conn.close();
      return;
    }
    const client = c;
    client.conn = conn;
    client.tls = tls;
    client.sni = sni;
    client.hop = hop;
    const done = (conn as Deno.TlsConn).handshake().then(
      (info) => {
        // The relay saw the ServerHello go by before the handshake could end.
        client.tlsLog = hop === null ? DIRECT_TLS_LOG : hop.logFields();
        if (client.phase === HANDSHAKE) this.serve(client, info.alpnProtocol);
      },
      (err) => {
        if (client.phase === HANDSHAKE) {
          // The TLS library's alert is on its way to the client through the relay.
          if (hop !== null) hop.refused = true;
          handshakeFailed({ listener: this.cfg.name, peer, sni, err });
        } else if (!this.closed && performance.now() >= client.deadline) {
          // Closed by the sweep at its deadline: the ClientHello came, the handshake did not end.
          const reason =
            `handshake not finished within handshake_timeout (${tls.handshakeTimeout} ms)`;
          handshakeFailed({ listener: this.cfg.name, peer, sni, err: reason });
        }
        this.forget(client);
      },
    );
    this.handshakes.add(done);
    done.then(() => this.handshakes.delete(done));
  }

  /** Serves `c`; `alpn` is what its TLS handshake chose (null for plain TCP). */
  private serve(c: ClientConn, alpn: string | null = null): void {
    const d = this.dispatcher;
    const secure = c.tls !== null;
    c.phase = SERVING;
    c.idleSince = performance.now();
    if (alpn !== "h2") {
      // HTTP/1.1, plain or over TLS (ALPN http/1.1 or none): scalwsd's own front.
      const serve = new FrontServe(d, c, this);
      const front = new FrontConnection(c.conn, serve, c, secure);
      c.server = front;
      const end = () => this.forget(c);
      front.finished.then(end, end);
      return;
    }
    c.h2 = true;
    const reset = (weight: number) => {
      const max = d.current.limits.maxResets;
      if (max > 0 && c.resetSeen(performance.now(), max, weight)) {
        tooManyResets(c, this.cfg.name, max);
      }
    };
    const handler = c.overLimit
      ? (_req: Request, info: Deno.ServeHandlerInfo<Deno.Addr>) => overConnLimit(c, info)
      : (req: Request, info: Deno.ServeHandlerInfo<Deno.Addr>) => {
        const s = new ServeSession(req, info, secure, c);
        const res = d.serve(s, this.redirect) as Response | Promise<Response>;
        // Only a stream reset while its handler works costs anything (rapid reset): one
        // answered at once costs what a request does.
        if (res instanceof Promise && d.current.limits.maxResets > 0) s.watchResets(resets, reset);
        return res;
      };
    let server: ServedConnection;
    try {
      server = serveConnection(c.conn, handler, onError);
    } catch (err) {
      log("error", "serve_failed", { listener: this.cfg.name, error: String(err) });
      this.forget(c);
      return;
    }
    c.server = server;
    const end = () => this.forget(c);
    server.finished.then(end, end);
  }

  private forget(c: ClientConn): void {
    if (c.phase !== CLOSED && c.server === null) c.close();
    c.phase = CLOSED;
    this.mine.delete(c);
    this.tracker.remove(c);
  }

  /**
   * Closes the public socket and resolves once its accept loop has ended, when Deno has let go
   * of the socket: a client that reconnects after a drain's `Connection: close` then reaches
   * another instance of the `reusePort` group, not this closing socket's queue (reset there
   * unless `net.ipv4.tcp_migrate_req` is 1).
   */
  async stopAccepting(): Promise<void> {
    this.closed = true;
    if (this.relay !== null) this.relay.close();
    else {
      try {
        this.socket.close();
      } catch {
        // already closed
      }
    }
    this.tracker.wakeAll();
    await this.accepting;
  }

  /**
   * Stops accepting (`stopAccepting`), then drains: in-flight requests finish and are answered
   * with `Connection: close`, an idle HTTP/1.1 keep-alive connection stays open for one more
   * request for about `graceMs` (`FrontConnection.drain`), HTTP/2 gets GOAWAY. Connections
   * still in their handshake are closed.
   */
  async shutdown(graceMs = DRAIN_IDLE_GRACE): Promise<void> {
    await this.stopAccepting();
    if (this.relay !== null) {
      // Connections still sending their ClientHello are handed on first (for a moment at
      // most: a client that sends nothing is cut below), then those handed on but not yet
      // accepted are still served.
      await this.relay.handedOn(GOAWAY_GRACE);
      if (this.loopbacks !== null) await this.retire(this.loopbacks);
      // A client whose handshake is done may have sent requests already: they are served,
      // or (HTTP/2) its connection gets GOAWAY naming what was processed, never just closed.
      // A handshake still stalled after a moment is closed below, as before.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.all(this.handshakes),
        new Promise((r) => (timer = setTimeout(r, GOAWAY_GRACE))),
      ]);
      clearTimeout(timer);
    } else if (this.mode === "direct") {
      // As above: handshakes under way on the public socket may finish.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.all(this.handshakes),
        new Promise((r) => (timer = setTimeout(r, GOAWAY_GRACE))),
      ]);
      clearTimeout(timer);
    }
    const waits: Promise<void>[] = [];
    const deadline = performance.now() + GOAWAY_GRACE;
    for (const c of this.mine) {
      if (c.server === null) this.forget(c);
      else if (c.phase === LINGERING) c.close(); // its unread body would hold a graceful close
      else if (c.server instanceof FrontConnection) waits.push(c.server.drain(graceMs));
      else {
        // HTTP/2: GOAWAY; closed once idle past the grace if the client never answers.
        if (c.h2) c.goAway(deadline);
        waits.push(c.server.shutdown().catch(() => {}));
      }
    }
    await Promise.all(waits);
    // The relay may still be copying the last answers to their clients.
    if (this.relay !== null) await this.relay.flushed();
    await Promise.all(this.retiring);
    await Promise.all(this.loops);
  }
}
