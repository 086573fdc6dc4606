/**
 * `runtime: {type: php}`: the handler that resolves a request's script under `root`
 * (`php_script.ts`), serves other files as the static handler does, and runs scripts over FastCGI
 * (`fastcgi/`) on one address or a pool with `protocol: fastcgi`, its STDERR kept per request for
 * the log. The CGI params are `php_params.ts`'s.
 *
 * @module
 */

import type { Answer } from "../front/mod.ts";
import type { PhpRuntime } from "../config/mod.ts";
import {
  ConnPool,
  type FinishListener,
  type SendStats,
  UpstreamError,
  type UpstreamResponse,
  type UpstreamTiming,
} from "../http1/mod.ts";
import {
  ClientTie,
  FcgiClientGone,
  FcgiQueueFull,
  FcgiQueueTimeout,
  type FcgiRequest,
  fcgiSend,
  type FcgiSendOptions,
  ParamsBuffer,
  type StderrSink,
} from "../fastcgi/mod.ts";
import { log } from "../observe/mod.ts";
import type { Exchange, Handler } from "../pipeline/mod.ts";
import { type Clock, plain } from "../base/mod.ts";
import { failureKind, type Member, type MemberTry, Outcome, type Pool } from "../upstream/mod.ts";
import { type ClientBody, readWhole } from "./client_body.ts";
import { isNoBody, prepareBody, PreparedBody } from "./proxy_body.ts";
import { AttemptSpan } from "./attempt_span.ts";
import type { MemberAddress } from "../net/mod.ts";
import { clientBodyFailed, errorStatus, reason, toResponse } from "./proxy_common.ts";
import { buildParams } from "./php_params.ts";
import { resolveScript, STATIC } from "./php_script.ts";
import { ScriptCache } from "./script_cache.ts";
import { StaticHandler } from "./static.ts";

/** STDERR kept per request: at most this many lines of at most `STDERR_LINE` bytes. */
const STDERR_LINES = 8;
const STDERR_LINE = 1024;

const decoder = new TextDecoder();

/** Params buffers of finished requests, reused (at most `SPARE_PARAMS`, none over 16 KiB). */
const spareParams: ParamsBuffer[] = [];
const SPARE_PARAMS = 64;

function takeParams(): ParamsBuffer {
  return spareParams.pop() ?? new ParamsBuffer(1024);
}

function giveParams(p: ParamsBuffer): void {
  if (spareParams.length < SPARE_PARAMS && p.buf.length <= 16384) spareParams.push(p);
}

/**
 * One FastCGI attempt on a single address: send options, the end of the response body (bytes,
 * the access log) and the bounded STDERR log.
 */
class PhpAttempt implements FcgiSendOptions, FinishListener, StderrSink {
  readonly onFinish: FinishListener = this;
  readonly stderr: StderrSink = this;
  readonly connectTimeout: number;
  readonly responseTimeout: number;
  readonly stats: SendStats;
  /** Upstream connect and header times go to the exchange (the access log). */
  readonly timing: UpstreamTiming;
  /** The request's tie to its client (set by the handler when the front can watch it). */
  tie: ClientTie | undefined = undefined;
  lines = 0;
  protected open = true;
  /** The attempt's client span when the request is traced, else null. */
  trace: AttemptSpan | null = null;

  constructor(readonly ex: Exchange, rt: PhpRuntime, readonly where: string) {
    this.connectTimeout = rt.connect_timeout;
    this.responseTimeout = rt.response_timeout;
    this.stats = ex.stats;
    this.timing = ex;
  }

  onStderr(buf: Uint8Array, from: number, to: number): void {
    if (this.lines > STDERR_LINES) return;
    for (const line of decoder.decode(buf.subarray(from, to)).split("\n")) {
      if (line === "") continue;
      const dropped = ++this.lines > STDERR_LINES;
      log("warn", "fastcgi_stderr", {
        tenant: this.ex.stats.tenant,
        app: this.ex.stats.app,
        member: this.where,
        path: this.ex.path,
        line: dropped ? "(further lines dropped)" : line.slice(0, STDERR_LINE),
      });
      if (dropped) return;
    }
  }

  bodyFinished(ok: boolean, bytes: number, cancelled = false): void {
    // Called at once after the connection went back (maybe to the next request): a late
    // close of this client must not close it.
    this.tie?.arm(null);
    this.ended(ok, cancelled);
    if (this.trace !== null) this.trace.bodyEnded(!ok && !cancelled);
    this.ex.sent(bytes);
    if (this.ex.deferred) this.ex.complete();
  }

  /** Drops the attempt (idempotent with the end of its body). */
  release(): void {
    this.ended(true, true);
  }

  protected ended(_ok: boolean, _cancelled: boolean): void {
    this.open = false;
  }
}

/** An attempt on a pool member: the end of its body also settles the member's verdict. */
class PoolPhpAttempt extends PhpAttempt implements MemberTry {
  streaming = false;
  verdictPending = false;

  constructor(
    ex: Exchange,
    rt: PhpRuntime,
    readonly pool: Pool,
    readonly member: Member,
    readonly epoch: number,
  ) {
    super(ex, rt, member.address);
  }

  protected override ended(ok: boolean, cancelled: boolean): void {
    if (!this.open) return;
    this.open = false;
    this.pool.release(this.member);
    if (cancelled) return;
    if (this.pool.report(this, ok ? Outcome.BODY_DONE : Outcome.BODY_BROKEN)) {
      this.trace?.ejected(this.member.address, this.pool.name);
    }
  }
}

/**
 * `runtime: {type: php}`: resolves the script under `root` (see `php_script.ts`), serves other
 * files with the static handler, and runs scripts over FastCGI on one address or a pool with
 * `protocol: fastcgi` (its balancing, passive health and retries apply).
 */
export class PhpHandler implements Handler {
  private rootReal: string | null = null;
  private readonly files: StaticHandler;

  constructor(
    readonly runtime: PhpRuntime,
    /** A single address's connections, or a pool. */
    private readonly target: ConnPool | Pool,
    private readonly maxBody: number,
    private readonly clock: Clock,
  ) {
    this.files = new StaticHandler({
      type: "static",
      root: runtime.root,
      index: runtime.index,
      follow_symlinks: runtime.follow_symlinks,
      allowed_roots: runtime.allowed_roots,
    });
    this.scripts = new ScriptCache(clock);
  }

  get address(): string {
    const f = this.runtime.fastcgi;
    return f.kind === "address" ? f.address.canonical : f.pool;
  }

  private readonly scripts: ScriptCache;

  private async root(): Promise<string> {
    this.rootReal ??= await Deno.realPath(this.runtime.root);
    return this.rootReal;
  }

  async handle(ex: Exchange): Promise<Answer> {
    let path: string;
    try {
      path = decodeURIComponent(ex.path);
    } catch {
      return answer(ex, 400, "Bad Request: invalid path encoding");
    }
    // The path is normalised; a decoded "%2F.." could still climb.
    if (path.includes("\0") || path.split("/").some((s) => s === "..")) {
      return answer(ex, 404, "Not Found");
    }
    let root: string;
    try {
      root = await this.root();
    } catch {
      return answer(ex, 404, "Not Found");
    }
    const rt = this.runtime;
    let found = this.scripts.get(path);
    if (found === undefined) {
      found = await resolveScript({
        root,
        path,
        index: rt.index,
        frontController: rt.front_controller,
        links: this.files.links,
      });
      this.scripts.set(path, found);
    }
    if (found === STATIC) return this.files.handle(ex);
    if (typeof found === "number") {
      return answer(ex, found, found === 403 ? "Forbidden" : "Not Found");
    }
    const pool = this.target instanceof ConnPool ? null : this.target;
    const retryable = pool !== null && pool.set.members.length > 1 &&
      pool.settings.retries > 0;
    const body = await this.body(ex, retryable);
    if (typeof body === "number") return clientBodyFailed(ex, body);
    // No body: CONTENT_LENGTH empty, unless the client declared an empty one (nginx passes its
    // Content-Length: 0).
    const length = !isNoBody(body)
      ? body.length
      : ex.req.headers.get("content-length") === "0"
      ? 0
      : -1;
    const params = takeParams();
    buildParams(params, ex, { script: found, root, path, contentLength: length, extra: rt.params });
    // A client that leaves from now on is dropped from the queue, or its script aborted.
    const tie = new ClientTie();
    const watched = ex.session.watchGone(tie.leave);
    try {
      return pool === null
        ? await this.single(ex, params, body, watched ? tie : undefined)
        : await this.pooled(ex, pool, params, body, watched ? tie : undefined);
    } finally {
      // Sent (or never to be): the response, read or streaming, no longer needs it.
      giveParams(params);
    }
  }

  /** The body with a known length (FastCGI needs CONTENT_LENGTH): one without is read whole. */
  private async body(ex: Exchange, retryable: boolean): Promise<PreparedBody | number> {
    let body = prepareBody(ex, {
      maxBody: this.maxBody,
      keep: retryable,
      keepWithin: this.runtime.response_timeout,
    });
    if (body instanceof Promise) body = await body;
    if (typeof body === "number" || body.length >= 0 || body.upload === null) return body;
    const upload: ClientBody = body.upload;
    try {
      const bytes = await readWhole(upload);
      return new PreparedBody(bytes, null, bytes.length, true);
    } catch {
      return upload.failure === "too_large" ? 413 : upload.failure === "stalled" ? 408 : 400;
    }
  }

  private async single(
    ex: Exchange,
    params: ParamsBuffer,
    body: PreparedBody,
    tie: ClientTie | undefined,
  ): Promise<Answer> {
    const attempt = new PhpAttempt(ex, this.runtime, this.address);
    attempt.tie = tie;
    ex.attempt(this.address);
    const f = this.runtime.fastcgi;
    const trace = ex.span === null || f.kind !== "address"
      ? null
      : traceAttempt(attempt, params, params.length, {
        address: f.address,
        pool: "",
        n: 1,
        why: "",
      });
    let res: UpstreamResponse;
    try {
      res = await fcgiSend(this.target as ConnPool, request(ex, params, body), attempt);
    } catch (err) {
      if (err instanceof FcgiQueueFull) {
        trace?.failed("queue_full");
        return this.queueFull(ex, err);
      }
      if (err instanceof FcgiClientGone) {
        trace?.failed("client_gone");
        return answer(ex, 499, "Client Closed Request");
      }
      if (!(err instanceof UpstreamError)) throw err;
      if (err.kind === "client") {
        trace?.failed("client_body");
        return clientBodyFailed(ex, body.clientFailure(err) || 400);
      }
      trace?.failed(failureKind(err));
      return this.failed(ex, err);
    }
    if (trace !== null) {
      trace.answered(res.status);
      trace.delivered();
    }
    return toResponse(ex, res, undefined);
  }

  /** `max_queue` requests already wait for this upstream: `503`, come back in a second. */
  private queueFull(ex: Exchange, err: FcgiQueueFull): Answer {
    log("warn", "fastcgi_queue_full", {
      tenant: ex.stats.tenant,
      app: ex.stats.app,
      member: ex.upstreamMember,
      queued: err.queued,
    });
    return answer(ex, 503, "Service Unavailable: too many requests wait for PHP", {
      "retry-after": "1",
    });
  }

  private failed(ex: Exchange, err: UpstreamError): Answer {
    log("warn", "fastcgi_failed", {
      tenant: ex.stats.tenant,
      app: ex.stats.app,
      member: ex.upstreamMember,
      error: err.message,
    });
    const status = errorStatus(err);
    return answer(ex, status, reason(status));
  }

  /** The pool decides (choose, report, retry, finish); this loop moves the bytes. */
  private async pooled(
    ex: Exchange,
    pool: Pool,
    params: ParamsBuffer,
    body: PreparedBody,
    tie: ClientTie | undefined,
  ): Promise<Answer> {
    const r = pool.start(ex, false);
    r.replayable = body.replayable;
    if (r.set.members.length === 0) {
      return answer(ex, 503, "Service Unavailable: the pool has no members", {
        "retry-after": "1",
      });
    }
    let last: UpstreamError | null = null;
    // Tracing: where the params end before an attempt's own context, and why the last failed.
    const base = params.length;
    let why = "";
    for (;;) {
      const member = pool.choose(r);
      if (member === undefined) break;
      ex.attempt(member.address);
      const attempt = new PoolPhpAttempt(ex, this.runtime, pool, member, r.epoch);
      const trace = ex.span === null ? null : traceAttempt(attempt, params, base, {
        address: member.parsed,
        pool: pool.name,
        n: r.attempts,
        why,
      });
      attempt.tie = tie;
      let res: UpstreamResponse;
      try {
        res = await fcgiSend(member.conns, request(ex, params, body), attempt);
      } catch (err) {
        attempt.release();
        if (
          err instanceof FcgiQueueFull || err instanceof FcgiQueueTimeout ||
          err instanceof FcgiClientGone
        ) {
          // The member is busy, not failing (or the client left): no verdict, no retry.
          trace?.failed(
            err instanceof FcgiQueueFull
              ? "queue_full"
              : err instanceof FcgiClientGone
              ? "client_gone"
              : "queue_timeout",
          );
          pool.finish(r, null);
          if (err instanceof FcgiQueueFull) return this.queueFull(ex, err);
          if (err instanceof FcgiClientGone) return answer(ex, 499, "Client Closed Request");
          return this.failed(ex, err);
        }
        if (!(err instanceof UpstreamError)) throw err;
        if (err.kind === "client") {
          trace?.failed("client_body");
          return clientBodyFailed(ex, body.clientFailure(err) || 400);
        }
        const outcome = err.phase === "connect" ? Outcome.CONNECT_FAILED : Outcome.NO_ANSWER;
        if (pool.report(attempt, outcome)) trace?.ejected(member.address, pool.name);
        last = err;
        log("warn", "fastcgi_failed", {
          tenant: ex.stats.tenant,
          app: ex.stats.app,
          member: member.address,
          error: err.message,
        });
        const again = pool.retry(r, failureKind(err));
        if (trace !== null) {
          why = failureKind(err);
          if (again) trace.retry(why);
          trace.failed(why);
        }
        if (again) continue;
        break;
      }
      attempt.streaming = res.body instanceof ReadableStream;
      // A script's own 5xx is the application's answer, not the member failing.
      const s = res.status;
      const ejected = pool.report(attempt, s === 502 || s === 503 || s === 504 ? 500 : s);
      if (trace !== null) {
        if (ejected) trace.ejected(member.address, pool.name);
        trace.answered(s);
        trace.delivered();
      }
      return toResponse(ex, res, pool.finish(r, member));
    }
    pool.finish(r, null);
    const status = last === null ? 502 : errorStatus(last);
    return answer(ex, status, reason(status));
  }
}

/**
 * Starts a traced attempt's client span and puts its context in the params after `base` (the
 * request's own params): `HTTP_TRACEPARENT`, and `HTTP_TRACESTATE` when there is one.
 */
function traceAttempt(
  attempt: PhpAttempt,
  params: ParamsBuffer,
  base: number,
  o: { address: MemberAddress; pool: string; n: number; why: string },
): AttemptSpan {
  const ex = attempt.ex;
  const trace = attempt.trace = AttemptSpan.start(ex.span!, {
    method: ex.req.method,
    protocol: "fastcgi",
    address: o.address,
    pool: o.pool,
    attempt: o.n,
    retryReason: o.why,
  });
  params.length = base;
  params.add("HTTP_TRACEPARENT", trace.traceparent());
  if (trace.span.traceState !== "") params.add("HTTP_TRACESTATE", trace.span.traceState);
  return trace;
}

function request(ex: Exchange, params: ParamsBuffer, body: PreparedBody): FcgiRequest {
  return {
    method: ex.req.method,
    params,
    body: body.source(),
    bodyLength: Math.max(0, body.length),
  };
}

function answer(
  ex: Exchange,
  status: number,
  text: string,
  headers?: Record<string, string>,
): Response {
  ex.answered(status);
  return plain(status, text, headers);
}
