import type { AccessLog } from "../observe/access_log.ts";
import type { Metrics } from "../observe/families.ts";
import { AppStats, Exchange } from "../pipeline/exchange.ts";
import { hostName } from "../pipeline/hosts.ts";
import { normalizePath } from "../pipeline/path.ts";
import { clientAddress } from "../pipeline/client_ip.ts";
import { pathStart, urlAuthority } from "../pipeline/url.ts";
import { log } from "../observe/log.ts";
import { plain } from "../base/plain.ts";
import type { Policy } from "../pipeline/policies/policy.ts";
import { type ClientConn, type TlsState, UPGRADED } from "./client_conn.ts";
import type { AppEntry, Generation, RequestLimits } from "./generation.ts";

/** A pipeline step's own answer instead of the handler's (a limit, strict SNI, a deny path). */
function answerWith(
  ex: Exchange,
  status: number,
  text: string,
  extra?: Record<string, string>,
): Response {
  ex.status = status;
  return plain(status, text, extra);
}

const CLOSE = { connection: "close" };

/** Header lines and their bytes over the limits (only called when a limit is below Deno's). */
function headersTooLarge(headers: Headers, limits: RequestLimits): boolean {
  let count = 0;
  let size = 0;
  for (const [k, v] of headers) {
    count++;
    size += k.length + v.length + 4;
  }
  return (limits.maxHeaderCount > 0 && count > limits.maxHeaderCount) ||
    (limits.maxHeaderSize > 0 && size > limits.maxHeaderSize);
}

/** What `screen` reads besides the exchange; the dispatcher refills one per request. */
class ScreenInput {
  /** Length of the request target as received (path and query). */
  uriLength = 0;
  /** The host name the application was found by. */
  host = "";
  app!: AppEntry;
  limits!: RequestLimits;
  /** The client connection when the listener tracks connections, else null. */
  conn: ClientConn | null = null;
  /** The TLS state of a listener served whole (without connection tracking), else null. */
  tls: TlsState | null = null;
}

/**
 * The request limits and the security step, in the pipeline's order: URI length (414), header
 * limits (431), the client's request rate (429), strict SNI (421), deny paths (404). Returns
 * the pipeline's answer, or null to go on routing.
 */
function screen(ex: Exchange, s: ScreenInput): Response | null {
  const limits = s.limits;
  if (s.uriLength > limits.maxUri) return answerWith(ex, 414, "URI Too Long");
  if (
    (limits.maxHeaderCount > 0 || limits.maxHeaderSize > 0) &&
    headersTooLarge(ex.req.headers, limits)
  ) {
    return answerWith(ex, 431, "Request Header Fields Too Large");
  }
  const app = s.app;
  const limiter = app.limiter;
  if (limiter !== null) {
    const wait = limiter.take(ex.client);
    if (wait > 0) {
      return answerWith(ex, 429, "Too Many Requests", { "retry-after": String(wait) });
    }
  }
  const conn = s.conn;
  const t = conn !== null ? conn.tls : s.tls;
  if (t !== null && t.strict) {
    // Deno does not tell the SNI name: the host must be a name of the listener's certificates,
    // and the first request's host stands for the SNI name on the whole connection.
    const host = s.host;
    if (conn === null || conn.pinned === null) {
      if (!t.certs.covers(host)) return answerWith(ex, 421, "Misdirected Request");
      if (conn !== null) conn.pinned = host;
    } else if (conn.pinned !== host) return answerWith(ex, 421, "Misdirected Request");
  }
  if (app.deny !== null && app.deny.match(ex.path)) return answerWith(ex, 404, "Not Found");
  return null;
}

/** 413 before reading when the Content-Length is over the route's `max_body`. */
function tooLarge(ex: Exchange, maxBody: number): Response | null {
  const req = ex.req;
  const m = req.method;
  if (m === "GET" || m === "HEAD") return null;
  const cl = req.headers.get("content-length");
  if (cl === null || !(Number(cl) > maxBody)) return null;
  // The body stays unread: the connection cannot be reused.
  ex.closeConnection = true;
  return answerWith(ex, 413, "Content Too Large", CLOSE);
}

/**
 * The request path: generation -> host -> route -> handler. Holds the current generation; a
 * request reads it once and keeps it.
 */
export class Dispatcher {
  /** Replaced whole on reload. */
  current: Generation;
  /** When set, responses carry `Connection: close` (draining). */
  draining = false;
  /** Requests received since the start (the memory trimmer reads the rate). */
  requests = 0;

  /** Requests answered before an application was found (bad or unknown host): `-`, `-`. */
  private readonly unmatched: AppStats;
  /** `screen`'s input, refilled per request: the request path allocates nothing for it. */
  private readonly screenInput = new ScreenInput();

  constructor(
    gen: Generation,
    private readonly metrics: Metrics,
    private readonly log: AccessLog,
  ) {
    this.current = gen;
    this.unmatched = new AppStats("-", "-", metrics);
  }

  /**
   * Answers a request stopped before an application was found (a bad or unknown host); it is
   * counted and logged like any other, under `-`/`-`.
   */
  private answerUnrouted(
    req: Request,
    info: Deno.ServeHandlerInfo<Deno.Addr>,
    conn: ClientConn | null,
    res: Response,
  ): Response {
    const peer = conn !== null ? conn.peer : (info.remoteAddr as Deno.NetAddr).hostname ?? "unix";
    const url = req.url;
    const ps = pathStart(url);
    const q = url.indexOf("?", ps);
    const path = q < 0 ? url.slice(ps) : url.slice(ps, q);
    const ex = new Exchange({
      req,
      path: path || "/",
      query: "",
      authority: "",
      peer,
      peerTrusted: false,
      client: peer,
      secure: false,
      stats: this.unmatched,
      start: performance.now(),
      log: this.log,
    });
    ex.status = res.status;
    ex.complete();
    if (conn !== null) conn.requestDone();
    return res;
  }

  /**
   * Answers a request on a listener with `redirect` (the `http -> https` listener): every
   * request gets the redirect, whatever its host; counted and logged under tenant and app `-`.
   */
  redirect(
    req: Request,
    info: Deno.ServeHandlerInfo<Deno.Addr>,
    secure: boolean,
    conn: ClientConn | null,
    policy: Policy,
  ): Response {
    this.requests++;
    if (conn !== null) conn.requestStarted();
    const authority = req.headers.get("host") ?? (secure ? urlAuthority(req.url) : "");
    if (hostName(authority) === "" || authority.indexOf(",") >= 0) {
      return this.answerUnrouted(req, info, conn, plain(400, "Bad Request: invalid Host header"));
    }
    const url = req.url;
    const ps = pathStart(url);
    const q = url.indexOf("?", ps);
    const rawPath = q < 0 ? url.slice(ps) : url.slice(ps, q);
    const peer = conn !== null ? conn.peer : (info.remoteAddr as Deno.NetAddr).hostname ?? "unix";
    const ex = new Exchange({
      req,
      path: normalizePath(rawPath.length === 0 ? "/" : rawPath),
      query: q < 0 ? "" : url.slice(q),
      authority,
      peer,
      peerTrusted: false,
      client: peer,
      secure,
      stats: this.unmatched,
      start: performance.now(),
      log: this.log,
    });
    const res = policy.request!(ex) as Response;
    ex.complete();
    if (conn !== null) conn.requestDone();
    return res;
  }

  /**
   * Answers one request. `conn` is the client connection when the listener tracks its
   * connections (timeouts, strict SNI, per-peer counts), else null; `tls` is the TLS state of
   * a listener served whole (for strict SNI without a connection).
   */
  handle(
    req: Request,
    info: Deno.ServeHandlerInfo<Deno.Addr>,
    secure: boolean,
    conn: ClientConn | null = null,
    tls: TlsState | null = null,
  ): Response | Promise<Response> {
    const gen = this.current;
    this.requests++;
    if (conn !== null) conn.requestStarted();
    let authority = req.headers.get("host");
    if (authority === null) {
      // HTTP/2 carries the authority in the URL, never in a Host header.
      if (!secure) {
        return this.answerUnrouted(req, info, conn, plain(400, "Bad Request: missing Host header"));
      }
      authority = urlAuthority(req.url);
    }
    const host = hostName(authority);
    if (host === "" || authority.indexOf(",") >= 0) {
      return this.answerUnrouted(req, info, conn, plain(400, "Bad Request: invalid Host header"));
    }
    const app = gen.hosts.lookup(host);
    if (app === undefined) {
      return this.answerUnrouted(req, info, conn, plain(404, "Not Found: unknown host"));
    }

    const url = req.url;
    const ps = pathStart(url);
    const q = url.indexOf("?", ps);
    const rawPath = q < 0 ? (ps === 0 ? url : url.slice(ps)) : url.slice(ps, q);
    const path = normalizePath(rawPath.length === 0 ? "/" : rawPath);
    const peer = conn !== null ? conn.peer : (info.remoteAddr as Deno.NetAddr).hostname ?? "unix";
    const peerTrusted = gen.trusted(peer);
    const client = peerTrusted ? clientAddress(peer, req.headers, gen.trusted) : peer;
    const ex = new Exchange({
      req,
      path,
      query: q < 0 ? "" : url.slice(q),
      authority,
      peer,
      peerTrusted,
      client,
      secure,
      stats: app.stats,
      start: performance.now(),
      log: this.log,
    });
    const limits = gen.limits;
    ex.bodyTimeout = limits.bodyTimeout;
    this.metrics.inflight.value++;
    let res: Response | Promise<Response>;
    try {
      const s = this.screenInput;
      s.uriLength = url.length - ps;
      s.host = host;
      s.app = app;
      s.limits = limits;
      s.conn = conn;
      s.tls = tls;
      const stopped = screen(ex, s);
      if (stopped !== null) res = stopped;
      else {
        const route = app.router.match(path, ex);
        res = tooLarge(ex, route.maxBody) ?? route.handler.handle(ex);
      }
    } catch (err) {
      res = this.fail(ex, err);
    }
    if (res instanceof Promise) return this.settle(ex, res, info, conn);
    return this.finish(ex, res, info, conn);
  }

  /** Finishes an asynchronous handler's answer: a method, not two closures per request. */
  private async settle(
    ex: Exchange,
    pending: Promise<Response>,
    info: Deno.ServeHandlerInfo<Deno.Addr>,
    conn: ClientConn | null,
  ): Promise<Response> {
    let res: Response;
    try {
      res = await pending;
    } catch (err) {
      res = this.fail(ex, err);
    }
    return this.finish(ex, res, info, conn);
  }

  private finish(
    ex: Exchange,
    res: Response,
    info: Deno.ServeHandlerInfo<Deno.Addr>,
    conn: ClientConn | null,
  ): Response {
    this.metrics.inflight.value--;
    if (ex.status === 0) ex.status = res.status;
    if (!ex.deferred) ex.complete();
    if (this.draining) res.headers.set("connection", "close");
    if (conn !== null) {
      // A tunnel is no HTTP request any more: the connection's HTTP timeouts end here.
      if (res.status === 101) conn.phase = UPGRADED;
      else if (ex.closeConnection) info.completed.then(conn.lingerOn, conn.lingerOn);
      else if (ex.deferred || ex.streaming) info.completed.then(conn.done, conn.done);
      else conn.requestDone();
    }
    return res;
  }

  private fail(ex: Exchange, err: unknown): Response {
    ex.status = 500;
    ex.deferred = false;
    log("error", "handler_failed", { error: String(err), stack: (err as Error)?.stack });
    return plain(500, "Internal Server Error");
  }
}
