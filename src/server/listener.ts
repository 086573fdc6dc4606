import { loadCertificates } from "../config/certificates.ts";
import { ConfigError } from "../config/errors.ts";
import type { ListenerConfig } from "../config/types.ts";
import { log } from "../observe/log.ts";
import { ClientConn, CLOSED, HANDSHAKE, LINGERING, SERVING, type TlsState } from "./client_conn.ts";
import { ConnTracker } from "./conn_tracker.ts";
import { listenTlsBySni, serveConnection, type ServedConnection } from "./deno_internal.ts";
import type { Dispatcher } from "./dispatcher.ts";
import type { Policy } from "../pipeline/policies/policy.ts";
import { redirectPolicy } from "../pipeline/policies/redirect.ts";
import { CertificateSet } from "./sni.ts";
import { FrontConnection } from "../front/connection.ts";
import { FrontServe } from "./front_conn.ts";

/** Pause after an accept error such as EMFILE before trying again (ms). */
const ACCEPT_RETRY = 100;
/** How long a rebind waits for the old socket to be released (ms). */
const REBIND_FOR = 2000;

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

/** Reads and checks a TLS listener's certificates; throws `ConfigError` naming its path. */
function tlsStateOf(cfg: ListenerConfig, file: string, index: number): TlsState | null {
  const tls = cfg.tls;
  if (tls === undefined) return null;
  const errors: string[] = [];
  const certs = loadCertificates(
    tls.certificates,
    `server.listeners[${index}].tls`,
    Deno.readTextFileSync,
    errors,
    [],
  );
  if (certs === undefined) throw new ConfigError(file, errors);
  return {
    certs: new CertificateSet(certs),
    strict: tls.strict_sni,
    handshakeTimeout: tls.handshake_timeout,
  };
}

/**
 * One configured listener, plain HTTP or TLS (certificate by SNI, ALPN `h2` and `http/1.1`).
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
  private socket: Deno.Listener;
  private tls: TlsState | null;
  private cfg: ListenerConfig;
  /** `redirect` of the listener: every request gets it; null for a listener that routes. */
  private redirect: Policy | null;
  private readonly mine = new Set<ClientConn>();
  private readonly tracker: ConnTracker;
  private closed = false;
  private loops: Promise<void>[] = [];

  /** Binds `cfg` (the listener at `index` of the configuration in `file`). */
  constructor(
    cfg: ListenerConfig,
    private readonly dispatcher: Dispatcher,
    private readonly reusePort: boolean,
    file: string,
    index: number,
  ) {
    this.cfg = cfg;
    this.redirect = cfg.redirect ? redirectPolicy(cfg.redirect) : null;
    this.tracker = trackerOf(dispatcher);
    this.tls = tlsStateOf(cfg, file, index);
    this.socket = this.bind(cfg.port);
    this.addr = this.socket.addr as Deno.NetAddr;
    this.loops.push(this.acceptLoop(this.socket));
  }

  private bind(port: number): Deno.Listener {
    const host = this.cfg.hostname;
    const hostname = host.startsWith("[") ? host.slice(1, -1) : host;
    const tls = this.tls;
    if (tls !== null) {
      const certs = tls.certs;
      return listenTlsBySni(
        { hostname, port, reusePort: this.reusePort },
        (sni) => certs.select(sni),
      );
    }
    // reusePort needs --unstable-net; only the controller's instances ask for it.
    return this.reusePort
      ? Deno.listen({ hostname, port, reusePort: true } as Deno.TcpListenOptions)
      : Deno.listen({ hostname, port });
  }

  /**
   * Applies a reloaded configuration of this address. New certificates or a switch between
   * plain and TLS need a new socket (Deno keeps each
   * SNI answer for the life of a listener): the old socket closes and the new one binds the
   * same port as soon as Deno lets go of the old (a few ms, during which connection attempts
   * are refused). Accepted connections stay with what they negotiated.
   */
  async update(cfg: ListenerConfig, file: string, index: number): Promise<void> {
    const next = tlsStateOf(cfg, file, index);
    const before = this.tls;
    this.cfg = cfg;
    this.redirect = cfg.redirect ? redirectPolicy(cfg.redirect) : null;
    const same = next === null
      ? before === null
      : before !== null && before.certs.fingerprint === next.certs.fingerprint;
    if (same) {
      if (next !== null && before !== null) {
        // Settings only: servers and connections keep the object they were given.
        before.strict = next.strict;
        before.handshakeTimeout = next.handshakeTimeout;
      }
      return;
    }
    this.tls = next;
    this.socket.close();
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
    this.loops.push(this.acceptLoop(this.socket));
    log("info", "listener_rebound", { listener: cfg.name, tls: next !== null });
  }

  private async acceptLoop(socket: Deno.Listener): Promise<void> {
    for (;;) {
      const wait = this.tracker.slot(this.dispatcher.current.config.server.limits.max_connections);
      if (wait !== null) await wait;
      if (this.closed || socket !== this.socket) return;
      let conn: Deno.Conn;
      try {
        conn = await socket.accept();
      } catch (err) {
        if (this.closed || socket !== this.socket) return;
        if (err instanceof Deno.errors.BadResource || err instanceof Deno.errors.Interrupted) {
          return;
        }
        log("error", "accept_failed", { listener: this.cfg.name, error: String(err) });
        await new Promise((r) => setTimeout(r, ACCEPT_RETRY));
        continue;
      }
      this.open(conn);
    }
  }

  private open(conn: Deno.Conn): void {
    const peer = (conn.remoteAddr as Deno.NetAddr).hostname ?? "";
    const tls = this.tls;
    const now = performance.now();
    const c = new ClientConn(conn, peer, tls, now);
    const gen = this.dispatcher.current;
    const perPeer = this.tracker.add(c);
    this.mine.add(c);
    const limit = gen.config.server.limit_conn;
    if (limit !== undefined && perPeer > limit && !gen.trusted(peer)) c.overLimit = true;
    if (tls === null) {
      this.serve(c);
      return;
    }
    c.deadline = now + tls.handshakeTimeout;
    (conn as Deno.TlsConn).handshake().then(
      (info) => {
        if (c.phase === HANDSHAKE) this.serve(c, info.alpnProtocol);
      },
      () => this.forget(c),
    );
  }

  /** Serves `c`; `alpn` is what its TLS handshake chose (null for plain TCP). */
  private serve(c: ClientConn, alpn: string | null = null): void {
    const d = this.dispatcher;
    const secure = c.tls !== null;
    c.phase = SERVING;
    c.idleSince = performance.now();
    if (alpn !== "h2") {
      // HTTP/1.1, plain or over TLS (ALPN http/1.1 or none): scalwsd's own front.
      const serve = new FrontServe(d, c, () => this.redirect);
      const front = new FrontConnection(c.conn, serve, c, secure);
      c.server = front;
      const end = () => this.forget(c);
      front.finished.then(end, end);
      return;
    }
    const handler = c.overLimit
      ? (_req: Request, info: Deno.ServeHandlerInfo<Deno.Addr>) => overConnLimit(c, info)
      : (req: Request, info: Deno.ServeHandlerInfo<Deno.Addr>) =>
        this.redirect !== null
          ? d.redirect(req, info, secure, c, this.redirect)
          : d.handle(req, info, secure, c);
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
   * Stops accepting; in-flight requests finish, idle connections close (like
   * `Deno.HttpServer.shutdown`). Connections still in their handshake are closed.
   */
  async shutdown(): Promise<void> {
    this.closed = true;
    try {
      this.socket.close();
    } catch {
      // already closed
    }
    this.tracker.wakeAll();
    const waits: Promise<void>[] = [];
    for (const c of this.mine) {
      if (c.server === null) this.forget(c);
      else if (c.phase === LINGERING) c.close(); // its unread body would hold a graceful close
      else waits.push(c.server.shutdown().catch(() => {}));
    }
    await Promise.all(waits);
    await Promise.all(this.loops);
  }
}
