/**
 * The request path both fronts share: a front hands it one `Session` per request, and the
 * dispatcher counts it, builds its `Exchange` (in one place), screens it (limits, rate, strict
 * SNI, deny paths), finds the application by host and the route by path, runs the handler, and
 * gives the answer back through the session, which makes it what its front writes. It holds the
 * current generation; a request reads it once and keeps it.
 *
 * It is not a front: reading requests, writing answers and the connection's timers belong to
 * scalwsd's own HTTP/1.1 front (`front/`, `server/front_conn.ts`) and to Deno.serve
 * (`server/serve_session.ts`); and it is not a handler: proxying, caching, files and policies
 * sit behind `route.handler`.
 *
 * @module
 */

import {
  answerBytes,
  AppStats,
  clientAddress,
  Exchange,
  hostName,
  normalizePath,
  type Policy,
  type Session,
} from "../pipeline/mod.ts";
import { type AccessLog, log, type Metrics } from "../observe/mod.ts";
import { plain } from "../base/mod.ts";
import type { AppEntry, Generation } from "./generation.ts";
import type { Answer } from "../front/mod.ts";
import type { Http01Challenges } from "../acme/mod.ts";

/** A pipeline step's own answer instead of the handler's (a limit, strict SNI, a deny path). */
function answerWith(
  ex: Exchange,
  status: number,
  text: string,
  extra?: Record<string, string>,
): Response {
  ex.answered(status);
  return plain(status, text, extra);
}

const CLOSE = { connection: "close" };

/**
 * The request limits and the security step, in the pipeline's order: URI length (414), header
 * limits (431), the client's request rate (429), strict SNI (421), deny paths (404). Returns
 * the pipeline's answer, or null to go on routing; a promise when the rate is decided by the
 * shared limits store.
 */
function screen(
  ex: Exchange,
  gen: Generation,
  app: AppEntry,
  host: string,
): Response | null | Promise<Response | null> {
  const over = ex.session.headLimit(gen.limits);
  if (over === 414) return answerWith(ex, 414, "URI Too Long");
  if (over === 431) return answerWith(ex, 431, "Request Header Fields Too Large");
  const limiter = app.limiter;
  if (limiter !== null) {
    const wait = limiter.decide(ex.client);
    if (typeof wait !== "number") {
      return wait.then((w) => w > 0 ? tooMany(ex, w) : security(ex, app, host));
    }
    if (wait > 0) return tooMany(ex, wait);
  }
  return security(ex, app, host);
}

function tooMany(ex: Exchange, wait: number): Response {
  return answerWith(ex, 429, "Too Many Requests", { "retry-after": String(wait) });
}

/** Strict SNI (421) and deny paths (404), after the limits. */
function security(ex: Exchange, app: AppEntry, host: string): Response | null {
  if (ex.session.misdirected(host)) return answerWith(ex, 421, "Misdirected Request");
  if (app.deny !== null && app.deny.match(ex.path)) return answerWith(ex, 404, "Not Found");
  return null;
}

/** 413 before reading when the Content-Length is over the route's `max_body`. */
function tooLarge(ex: Exchange, maxBody: number): Response | null {
  const m = ex.req.method;
  if (m === "GET" || m === "HEAD") return null;
  const length = ex.session.contentLength;
  if (!(length > maxBody)) return null;
  // The body stays unread: the connection cannot be reused.
  ex.closeAfter();
  return answerWith(ex, 413, "Content Too Large", CLOSE);
}

/** Exchanges no application saw and the ones a `redirect` listener answers are built apart. */
const UNROUTED = 0;
const REDIRECTED = 1;
const ROUTED = 2;

/** The request path: session -> exchange -> host -> route -> handler -> session. */
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

  constructor(
    gen: Generation,
    private readonly metrics: Metrics,
    private readonly log: AccessLog,
  ) {
    this.current = gen;
    this.unmatched = new AppStats("-", "-", metrics);
  }

  /**
   * Answers one request of either front. `redirect` is the listener's `redirect` policy (the
   * `http -> https` listener: every request gets it, whatever its host, counted and logged
   * under tenant and app `-`), or null: the request is routed.
   */
  serve(s: Session, redirect: Policy | null): Answer | Promise<Answer> {
    this.begin(s);
    if (redirect !== null) return this.redirect(s, redirect);
    const gen = this.current;
    // HTTP/2 streams: hyper advertises and enforces its own 200 (REFUSED_STREAM past it); a
    // 429 below what SETTINGS announced would refuse what the client was allowed (issue 25).
    const authority = s.authority;
    if (authority === null) {
      return this.unrouted(s, plain(400, s.authorityError ?? "Bad Request: missing Host header"));
    }
    return this.route(s, authority, gen);
  }

  /**
   * Answers an HTTP-01 validation request (`answer` from `Http01Challenges`: the key
   * authorization, or null for 404) on a plain listener, before routing; counted and logged
   * under `-`/`-` like other requests no application saw.
   */
  challenge(s: Session, host: string, answer: string | null): Answer {
    this.begin(s);
    // Answered ones only (a few per order); refusals are in the access log, not the event log.
    if (answer !== null) {
      log("info", "acme_challenge_answered", { host, target: s.target, peer: s.peer });
    }
    const res = answer === null ? plain(404, "Not Found") : new Response(answer, {
      status: 200,
      headers: { "content-type": "application/octet-stream" },
    });
    return this.unrouted(s, res);
  }

  /**
   * Every request is counted once, here. Its tracing span starts where its exchange is made
   * (`exchange()`, which knows whether the peer is trusted) and ends in `complete()`.
   */
  private begin(s: Session): void {
    this.requests++;
    s.started();
  }

  /**
   * The one place an exchange is made. `kind`: an unrouted request keeps its path as received
   * (it may not normalise) and its authority is not trusted; a redirected one is not routed.
   */
  private exchange(s: Session, kind: number, authority: string, stats: AppStats): Exchange {
    const gen = this.current;
    const target = s.target;
    const q = target.indexOf("?");
    const rawPath = q < 0 ? target : target.slice(0, q);
    const peer = s.peer;
    const peerTrusted = kind === ROUTED && gen.trusted(peer);
    const start = performance.now();
    const tracer = gen.tracer;
    return new Exchange({
      session: s,
      path: kind === UNROUTED
        ? rawPath || "/"
        : normalizePath(rawPath.length === 0 ? "/" : rawPath),
      query: kind === UNROUTED || q < 0 ? "" : target.slice(q),
      authority,
      peerTrusted,
      client: peerTrusted ? clientAddress(peer, s.req.headers, gen.trusted) : peer,
      stats,
      start,
      log: this.log,
      bodyTimeout: gen.limits.bodyTimeout,
      // The request's server span, ended by `complete()`: a client's context is believed from a
      // trusted proxy, or from anyone with `trust_client`.
      span: tracer === null ? null : tracer.start(
        s.req.headers,
        tracer.trustClient || (kind === ROUTED ? peerTrusted : gen.trusted(peer)),
        start,
      ),
    });
  }

  /** Answers a request stopped before an application was found; counted and logged as `-`/`-`. */
  private unrouted(s: Session, res: Response): Answer {
    const ex = this.exchange(s, UNROUTED, "", this.unmatched);
    ex.answered(res.status, answerBytes(res, ex.req.method));
    ex.complete();
    return s.finish(ex, res, this.draining);
  }

  /** The answer of a `redirect` listener. */
  private redirect(s: Session, policy: Policy): Answer {
    const authority = s.authority ?? "";
    if (hostName(authority) === "" || authority.indexOf(",") >= 0) {
      return this.unrouted(s, plain(400, "Bad Request: invalid Host header"));
    }
    const ex = this.exchange(s, REDIRECTED, authority, this.unmatched);
    const res = policy.request!(ex) as Response;
    ex.complete();
    return s.finish(ex, res, this.draining);
  }

  /** Host, limits, route, handler. */
  private route(s: Session, authority: string, gen: Generation): Answer | Promise<Answer> {
    const host = hostName(authority);
    if (host === "" || authority.indexOf(",") >= 0) {
      return this.unrouted(s, plain(400, "Bad Request: invalid Host header"));
    }
    const app = gen.hosts.lookup(host);
    if (app === undefined) return this.unrouted(s, plain(404, "Not Found: unknown host"));
    const ex = this.exchange(s, ROUTED, authority, app.stats);
    this.metrics.inflight.value++;
    let res: Answer | Promise<Answer>;
    try {
      const stopped = screen(ex, gen, app, host);
      if (stopped === null) res = this.routed(ex, app);
      else if (stopped instanceof Promise) res = stopped.then((r) => r ?? this.routed(ex, app));
      else res = stopped;
    } catch (err) {
      res = this.fail(ex, err);
    }
    if (res instanceof Promise) return this.settle(ex, res);
    return this.finish(ex, res);
  }

  /** The route and its handler, once the request passed the screen. */
  private routed(ex: Exchange, app: AppEntry): Answer | Promise<Answer> {
    const route = app.router.match(ex.path, ex);
    if (ex.span !== null) ex.routed(route.path);
    return tooLarge(ex, route.maxBody) ?? route.handler.handle(ex);
  }

  /** Finishes an asynchronous handler's answer: a method, not two closures per request. */
  private async settle(ex: Exchange, pending: Promise<Answer>): Promise<Answer> {
    let res: Answer;
    try {
      res = await pending;
    } catch (err) {
      res = this.fail(ex, err);
    }
    return this.finish(ex, res);
  }

  private finish(ex: Exchange, res: Answer): Answer {
    this.metrics.inflight.value--;
    if (ex.status === 0) ex.answered(res.status);
    if (!ex.deferred) {
      // Handlers that stream or proxy count their bytes; scalwsd's own answers are counted here.
      if (ex.bytes === 0) ex.sent(answerBytes(res, ex.req.method));
      ex.complete();
    }
    return ex.session.finish(ex, res, this.draining);
  }

  /** The 500 of a handler that threw (a bug), logged as `handler_failed`. */
  fail(ex: Exchange, err: unknown): Response {
    ex.answered(500);
    ex.cancelDeferral();
    log("error", "handler_failed", { error: String(err), stack: (err as Error)?.stack });
    return plain(500, "Internal Server Error");
  }
}
