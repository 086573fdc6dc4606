import { answerBytes } from "../pipeline/answer_bytes.ts";
import type { AccessLog } from "../observe/access_log.ts";
import type { Metrics } from "../observe/families.ts";
import { AppStats, type ClientRequest, Exchange } from "../pipeline/exchange.ts";
import { hostName } from "../pipeline/hosts.ts";
import { normalizePath } from "../pipeline/path.ts";
import { clientAddress } from "../pipeline/client_ip.ts";
import { pathStart, urlAuthority } from "../pipeline/url.ts";
import { log } from "../observe/log.ts";
import { plain } from "../base/plain.ts";
import type { Policy } from "../pipeline/policies/policy.ts";
import { type ClientConn, type TlsState, UPGRADED } from "./client_conn.ts";
import type { AppEntry, Generation, RequestLimits } from "./generation.ts";
import { type Answer, pullStream } from "../front/answer.ts";
import type { FrontConnection } from "../front/connection.ts";
import { FrontRequest } from "../front/front_request.ts";
import { headLimitStatus } from "../front/head_limits.ts";
import type { RequestHead } from "../front/request_head.ts";
import type { Http01Challenges } from "../acme/http01.ts";

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
const RETRY_SOON = { "retry-after": "1" };

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
  /** The parsed head when scalwsd's own front served the request (it counted the limits). */
  head: RequestHead | null = null;
}

/** 414, 431, or 0: the head limits, from the front's counts or from `Headers`. */
function headStatus(ex: Exchange, s: ScreenInput): number {
  const limits = s.limits;
  if (s.head !== null) return headLimitStatus(s.head, limits);
  if (s.uriLength > limits.maxUri) return 414;
  if (
    (limits.maxHeaderCount > 0 || limits.maxHeaderSize > 0) &&
    headersTooLarge(ex.req.headers as Headers, limits)
  ) {
    return 431;
  }
  return 0;
}

/**
 * The request limits and the security step, in the pipeline's order: URI length (414), header
 * limits (431), the client's request rate (429), strict SNI (421), deny paths (404). Returns
 * the pipeline's answer, or null to go on routing; a promise of that while a shared
 * `limits_store` decides the rate.
 */
function screen(ex: Exchange, s: ScreenInput): Response | null | Promise<Response | null> {
  const over = headStatus(ex, s);
  if (over === 414) return answerWith(ex, 414, "URI Too Long");
  if (over === 431) return answerWith(ex, 431, "Request Header Fields Too Large");
  const app = s.app;
  const limiter = app.limiter;
  const conn = s.conn;
  const t = conn !== null ? conn.tls : s.tls;
  const sni = conn !== null ? conn.sni : null;
  if (limiter !== null) {
    const wait = limiter.decide(ex.client);
    if (typeof wait !== "number") {
      // `s` is refilled by the next request: what the rest needs is held here.
      const host = s.host;
      return wait.then((w) => w > 0 ? tooMany(ex, w) : security(ex, app, host, t, sni));
    }
    if (wait > 0) return tooMany(ex, wait);
  }
  return security(ex, app, s.host, t, sni);
}

function tooMany(ex: Exchange, wait: number): Response {
  return answerWith(ex, 429, "Too Many Requests", { "retry-after": String(wait) });
}

/** Strict SNI (421) and deny paths (404), after the limits. */
function security(
  ex: Exchange,
  app: AppEntry,
  host: string,
  t: TlsState | null,
  sni: string | null,
): Response | null {
  if (t !== null && t.strict) {
    // The host must be the connection's SNI name or a name of the certificate that name
    // chose; when the name is unknown, a name of any certificate of the listener.
    if (sni !== null ? !t.certs.serves(sni, host) : !t.certs.covers(host)) {
      return answerWith(ex, 421, "Misdirected Request");
    }
  }
  if (app.deny !== null && app.deny.match(ex.path)) return answerWith(ex, 404, "Not Found");
  return null;
}

/** 413 before reading when the Content-Length is over the route's `max_body`. */
function tooLarge(ex: Exchange, maxBody: number): Response | null {
  const req = ex.req;
  const m = req.method;
  if (m === "GET" || m === "HEAD") return null;
  let length: number;
  if (req instanceof FrontRequest) length = req.head.contentLength;
  else {
    const cl = req.headers.get("content-length");
    if (cl === null) return null;
    length = Number(cl);
  }
  if (!(length > maxBody)) return null;
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
  /** HTTP-01 challenges of `tls.acme`, answered on plain listeners before routing. */
  challenges: Http01Challenges | null = null;

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
   * counted and logged like any other, under `-`/`-`. `info` is null for the front, which
   * keeps its connection's books itself.
   */
  private answerUnrouted(
    req: ClientRequest,
    target: string,
    peer: string,
    conn: ClientConn | null,
    info: Deno.ServeHandlerInfo<Deno.Addr> | null,
    res: Response,
  ): Response {
    const q = target.indexOf("?");
    const path = q < 0 ? target : target.slice(0, q);
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
    ex.bytes = answerBytes(res, req.method);
    ex.complete();
    if (conn !== null && info !== null) conn.requestDone();
    return res;
  }

  /**
   * Answers an HTTP-01 validation request (`answer` from `Http01Challenges`: the key
   * authorization, or null for 404) on a plain listener, before routing; counted and logged
   * under `-`/`-` like other requests no application saw.
   */
  challenge(req: FrontRequest, conn: ClientConn, host: string, answer: string | null): Response {
    this.requests++;
    // Answered ones only (a few per order); refusals are in the access log, not the event log.
    if (answer !== null) {
      log("info", "acme_challenge_answered", { host, target: req.target, peer: conn.peer });
    }
    const res = answer === null ? plain(404, "Not Found") : new Response(answer, {
      status: 200,
      headers: { "content-type": "application/octet-stream" },
    });
    return this.answerUnrouted(req, req.target, conn.peer, conn, null, res);
  }

  /**
   * Answers a request on a listener with `redirect` (the `http -> https` listener) that came
   * through Deno.serve: every request gets the redirect, whatever its host; counted and logged
   * under tenant and app `-`.
   */
  redirect(
    req: Request,
    info: Deno.ServeHandlerInfo<Deno.Addr>,
    secure: boolean,
    conn: ClientConn | null,
    policy: Policy,
  ): Response {
    if (conn !== null) conn.requestStarted();
    const url = req.url;
    const ps = pathStart(url);
    const authority = req.headers.get("host") ?? (secure ? urlAuthority(url) : "");
    const peer = conn !== null ? conn.peer : (info.remoteAddr as Deno.NetAddr).hostname ?? "unix";
    const res = this.redirectWith(req, authority, url.slice(ps), peer, secure, conn, info, policy);
    return res;
  }

  /** The redirect of a `redirect` listener for a request of scalwsd's own front. */
  redirectFront(req: FrontRequest, conn: ClientConn, policy: Policy): Response {
    return this.redirectWith(
      req,
      req.authority,
      req.target,
      conn.peer,
      req.secure,
      conn,
      null,
      policy,
    );
  }

  private redirectWith(
    req: ClientRequest,
    authority: string,
    target: string,
    peer: string,
    secure: boolean,
    conn: ClientConn | null,
    info: Deno.ServeHandlerInfo<Deno.Addr> | null,
    policy: Policy,
  ): Response {
    this.requests++;
    if (hostName(authority) === "" || authority.indexOf(",") >= 0) {
      return this.answerUnrouted(
        req,
        target,
        peer,
        conn,
        info,
        plain(400, "Bad Request: invalid Host header"),
      );
    }
    const q = target.indexOf("?");
    const rawPath = q < 0 ? target : target.slice(0, q);
    const ex = new Exchange({
      req,
      path: normalizePath(rawPath.length === 0 ? "/" : rawPath),
      query: q < 0 ? "" : target.slice(q),
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
    if (conn !== null && info !== null) conn.requestDone();
    return res;
  }

  /**
   * Answers one request that came through Deno.serve (HTTP/2). `conn` is the client connection
   * when the listener tracks its connections (timeouts, strict SNI, per-peer counts), else
   * null; `tls` is the TLS state of a listener served whole (for strict SNI without a
   * connection).
   */
  handle(
    req: Request,
    info: Deno.ServeHandlerInfo<Deno.Addr>,
    secure: boolean,
    conn: ClientConn | null = null,
    tls: TlsState | null = null,
  ): Response | Promise<Response> {
    if (conn !== null) conn.requestStarted();
    const url = req.url;
    const ps = pathStart(url);
    const target = ps === 0 ? url : url.slice(ps);
    const peer = conn !== null ? conn.peer : (info.remoteAddr as Deno.NetAddr).hostname ?? "unix";
    if (conn !== null && conn.active > this.current.limits.maxStreams) {
      // `max_concurrent_streams`: hyper's own cap (200) is what it advertises and refuses past.
      this.requests++;
      return this.answerUnrouted(
        req,
        target,
        peer,
        conn,
        info,
        plain(429, "Too Many Requests: too many concurrent streams", RETRY_SOON),
      );
    }
    let authority = req.headers.get("host");
    if (authority === null) {
      // HTTP/2 carries the authority in the URL, never in a Host header.
      if (!secure) {
        this.requests++;
        return this.answerUnrouted(
          req,
          target,
          peer,
          conn,
          info,
          plain(400, "Bad Request: missing Host header"),
        );
      }
      authority = urlAuthority(url);
    }
    const s = this.screenInput;
    s.conn = conn;
    s.tls = tls;
    s.head = null;
    const res = this.route(req, authority, target, peer, secure, null, info);
    return res instanceof Promise ? res.then(webResponse) : webResponse(res);
  }

  /**
   * Answers one request of scalwsd's own HTTP/1.1 front, on `conn`; the front keeps the
   * connection's books (started, done, lingering) and sees to draining itself.
   */
  handleFront(
    req: FrontRequest,
    conn: ClientConn,
    front: FrontConnection,
  ): Answer | Promise<Answer> {
    const head = req.head;
    if (head.host === null && head.targetAuthority === "") {
      this.requests++;
      return this.answerUnrouted(
        req,
        head.target,
        conn.peer,
        conn,
        null,
        plain(400, "Bad Request: missing Host header"),
      );
    }
    const s = this.screenInput;
    s.conn = conn;
    s.tls = null;
    s.head = head;
    return this.route(req, req.authority, head.target, conn.peer, req.secure, front, null);
  }

  /** The request path both fronts share: host, limits, route, handler. */
  private route(
    req: ClientRequest,
    authority: string,
    target: string,
    peer: string,
    secure: boolean,
    front: FrontConnection | null,
    info: Deno.ServeHandlerInfo<Deno.Addr> | null,
  ): Answer | Promise<Answer> {
    const gen = this.current;
    this.requests++;
    const s = this.screenInput;
    const conn = s.conn;
    const host = hostName(authority);
    if (host === "" || authority.indexOf(",") >= 0) {
      return this.answerUnrouted(
        req,
        target,
        peer,
        conn,
        info,
        plain(400, "Bad Request: invalid Host header"),
      );
    }
    const app = gen.hosts.lookup(host);
    if (app === undefined) {
      return this.answerUnrouted(
        req,
        target,
        peer,
        conn,
        info,
        plain(404, "Not Found: unknown host"),
      );
    }

    const q = target.indexOf("?");
    const rawPath = q < 0 ? target : target.slice(0, q);
    const path = normalizePath(rawPath.length === 0 ? "/" : rawPath);
    const peerTrusted = gen.trusted(peer);
    const client = peerTrusted ? clientAddress(peer, req.headers, gen.trusted) : peer;
    const ex = new Exchange({
      req,
      path,
      query: q < 0 ? "" : target.slice(q),
      authority,
      peer,
      peerTrusted,
      client,
      secure,
      stats: app.stats,
      start: performance.now(),
      log: this.log,
    });
    if (conn !== null) {
      ex.serverPort = conn.port;
      ex.serverAddr = conn.address;
      ex.remotePort = conn.peerPort;
      ex.tls = conn.tlsLog;
    } else if (info !== null) ex.remotePort = (info.remoteAddr as Deno.NetAddr).port ?? 0;
    if (front !== null) {
      ex.front = front;
      ex.rawAnswer = true;
    }
    const limits = gen.limits;
    ex.bodyTimeout = limits.bodyTimeout;
    this.metrics.inflight.value++;
    let res: Answer | Promise<Answer>;
    try {
      s.uriLength = target.length;
      s.host = host;
      s.app = app;
      s.limits = limits;
      const stopped = screen(ex, s);
      if (stopped === null) res = this.routed(ex, app, path);
      else if (stopped instanceof Promise) {
        res = stopped.then((r) => r ?? this.routed(ex, app, path));
      } else res = stopped;
    } catch (err) {
      res = this.fail(ex, err);
    }
    if (res instanceof Promise) return this.settle(ex, res, info, conn);
    return this.finish(ex, res, info, conn);
  }

  /** Routes within the application and runs the route's handler. */
  private routed(ex: Exchange, app: AppEntry, path: string): Answer | Promise<Answer> {
    const route = app.router.match(path, ex);
    return tooLarge(ex, route.maxBody) ?? route.handler.handle(ex);
  }

  /** Finishes an asynchronous handler's answer: a method, not two closures per request. */
  private async settle(
    ex: Exchange,
    pending: Promise<Answer>,
    info: Deno.ServeHandlerInfo<Deno.Addr> | null,
    conn: ClientConn | null,
  ): Promise<Answer> {
    let res: Answer;
    try {
      res = await pending;
    } catch (err) {
      res = this.fail(ex, err);
    }
    return this.finish(ex, res, info, conn);
  }

  private finish(
    ex: Exchange,
    res: Answer,
    info: Deno.ServeHandlerInfo<Deno.Addr> | null,
    conn: ClientConn | null,
  ): Answer {
    this.metrics.inflight.value--;
    if (ex.status === 0) ex.status = res.status;
    if (!ex.deferred) {
      // Handlers that stream or proxy count their bytes; scalwsd's own answers are counted here.
      if (ex.bytes === 0) ex.bytes = answerBytes(res, ex.req.method);
      ex.complete();
    }
    // The front sees to its connection, draining included.
    if (info === null) return res;
    if (this.draining && res instanceof Response) res.headers.set("connection", "close");
    if (conn !== null) {
      // A tunnel is no HTTP request any more: the connection's HTTP timeouts end here.
      if (res.status === 101) conn.phase = UPGRADED;
      else if (ex.closeConnection) info.completed.then(conn.lingerOn, conn.lingerOn);
      else if (ex.deferred || ex.streaming) info.completed.then(conn.done, conn.done);
      else conn.requestDone();
    }
    return res;
  }

  /** The 500 of a handler that threw (a bug), logged as `handler_failed`. */
  fail(ex: Exchange, err: unknown): Response {
    ex.status = 500;
    ex.deferred = false;
    log("error", "handler_failed", { error: String(err), stack: (err as Error)?.stack });
    return plain(500, "Internal Server Error");
  }
}

/** A Deno.serve answer from a handler's (only the front's exchanges get `FrontAnswer`s). */
function webResponse(a: Answer): Response {
  if (a instanceof Response) return a;
  const body = a.body;
  const init = body === null || body instanceof Uint8Array || body instanceof ReadableStream
    ? body
    : pullStream(body);
  return new Response(init as BodyInit | null, { status: a.status, headers: a.headers });
}
