/**
 * The exchange: one client request on its way through the pipeline, from the moment the
 * dispatcher knows its host to its access log line. It holds what routing found out
 * (path, query, client address, the application's counters), the request as it goes to the
 * member (policies' and the cache's edits), what happened (status, bytes, member, cache
 * verdict) and how it ends; `answer()` makes a handler's answer in the form of the front that
 * serves the request. Also the `Handler` interface and the per-application `AppStats`.
 *
 * It is not the front's view of the request (`session.ts`: the request, the connection, how
 * answers are written) and not a log writer (`observe/access_log.ts` writes what
 * `complete()` gives it).
 *
 * @module
 */

import type { AccessLog, HistogramSeries, Metrics, Series } from "../observe/mod.ts";
import { type Answer, type AnswerBody, type AnswerForm, WEB_FORM } from "../front/mod.ts";
import { EditedHeaders } from "./edited_headers.ts";
import { hostName } from "./hosts.ts";
import { keepable, newRequestId, requestIdHeaderLower } from "./request_id.ts";
import type { ClientRequest, Session, TlsLogFields } from "./session.ts";
import { type Span, spanMethod, STATUS_ERROR } from "../tracing/mod.ts";

export { IN_THE_CLEAR } from "./session.ts";
export type { ClientRequest, FrontUpgrade, RequestFields, TlsLogFields } from "./session.ts";

/** Header pairs walked like `Headers.forEach`. */
export interface HeaderWalk {
  forEach(fn: (value: string, name: string) => void, thisArg?: unknown): void;
}

/** Per-application observability handles, resolved lazily so a refused reload leaves no series. */
export class AppStats {
  private readonly byClass: (Series | undefined)[] = [
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
  ];
  private duration: HistogramSeries | undefined;
  private stale: Series | undefined;
  constructor(
    readonly tenant: string,
    readonly app: string,
    private readonly metrics: Metrics,
  ) {}

  record(status: number, seconds: number): void {
    const c = (status / 100) | 0;
    let s = this.byClass[c];
    if (s === undefined) {
      s = this.metrics.requests.with(this.tenant, this.app, `${c}xx`);
      this.byClass[c] = s;
    }
    s.value++;
    (this.duration ??= this.metrics.requestDuration.with(this.tenant, this.app)).observe(seconds);
  }

  /**
   * Stale-connection resends of this application (the HTTP/1 client does `+= 1`); backed by
   * `scalws_upstream_retries_total{tenant,app,protocol="http1"}`.
   */
  get staleResends(): number {
    return this.stale?.value ?? 0;
  }
  set staleResends(v: number) {
    (this.stale ??= this.metrics.staleRetries.with(this.tenant, this.app, "http1")).value = v;
  }
}

/**
 * What an `Exchange` is made of: the session the request came in, and what the dispatcher
 * found out about it. One object literal per request, whose fields the exchange copies.
 */
export interface ExchangeInit {
  /** The front's view of the request (its request, peer, TLS, how answers are made). */
  readonly session: Session;
  /** Normalised path (`normalizePath`), used for routing and sent upstream. */
  readonly path: string;
  /** The query as received, `?` included, or "". */
  readonly query: string;
  /** The Host header value, or the HTTP/2 authority; "" when the request has none. */
  readonly authority: string;
  /** The direct peer is in `trusted_proxies`. */
  readonly peerTrusted: boolean;
  /** The client address after `trusted_proxies` (the peer itself when untrusted). */
  readonly client: string;
  /** The application's counters (requests by class, duration, stale resends). */
  readonly stats: AppStats;
  /** `performance.now()` when the request arrived: the access log's duration starts there. */
  readonly start: number;
  /** Where `complete()` writes the access log line. */
  readonly log: AccessLog;
  /** `server.limits.body_read_timeout` in ms (0: none). */
  readonly bodyTimeout: number;
  /** The request's server span when `server.tracing` traces it, else null. */
  readonly span: Span | null;
}

/** `network.protocol.version` by the session's protocol. */
const PROTOCOL_VERSION: Record<string, string> = {
  "HTTP/1.0": "1.0",
  "HTTP/1.1": "1.1",
  "HTTP/2": "2",
};

/** How the exchange is completed: when the answer is passed on (the default), ... */
const AT_ANSWER = 0;
/** ... when its streamed body ends (the handler's body calls `complete()`), ... */
const AT_BODY_END = 1;
/** ... or at once, the body (a file) streaming on afterwards. */
const STREAMING = 2;

/**
 * One client request on its way through the pipeline: what the handlers need to know about it
 * and what the access log reports at the end. One object per request, no closures.
 *
 * What the dispatcher found out when it built it (`new Exchange({...})`, once the host is
 * known) is read-only. What changes afterwards is set through methods, in three groups:
 * the request as it goes to the member (`rewrite`, `editHeaders`, `sendHost`, `forwardWith`:
 * route policies and the cache), what happened (`answered`, `sent`, `attempt`,
 * `memberAnswered`, `memberOverran`, `cacheVerdict`: the access log and the metrics read it),
 * and how it ends (`deferCompletion`, `cancelDeferral`, `markStreaming`, `closeAfter`: the
 * session's books read it). `complete()` records it once: the dispatcher calls it when the
 * answer is passed on, unless completion was deferred to the end of a streamed body.
 *
 * It is not the front's view of the request (`session`) and writes nothing to the client: a
 * handler's answer is made with `answer()` and passed back.
 */
export class Exchange {
  /** The front's view of the request. */
  readonly session: Session;
  readonly req: ClientRequest;
  /** The Host header value (or the h2 authority). */
  readonly authority: string;
  /** The direct peer's address. */
  readonly peer: string;
  /** The direct peer is in `trusted_proxies`. */
  readonly peerTrusted: boolean;
  /** The client address after `trusted_proxies`. */
  readonly client: string;
  readonly secure: boolean;
  readonly stats: AppStats;
  readonly start: number;
  /** `server.limits.body_read_timeout` in ms (0: none): longest wait for a body chunk. */
  readonly bodyTimeout: number;
  /** The port of the listener that accepted the request (PHP's `SERVER_PORT`); 0: unknown. */
  readonly serverPort: number;
  /** The local address that accepted the connection (PHP's `SERVER_ADDR`); "": unknown. */
  readonly serverAddr: string;
  /** The direct peer's port (PHP's `REMOTE_PORT`); 0: unknown (a Unix socket). */
  readonly remotePort: number;
  readonly #log: AccessLog;
  /**
   * The request's server span when it is traced, else null: started by the dispatcher, ended
   * by `complete()`; attempts on members hang their client spans under it.
   */
  readonly span: Span | null;
  /** The matched route's path (`http.route`); "" before routing. */
  #route = "";
  /** How `answer` makes answers: the session's form, or `Response`s for a wrapper. */
  #form: AnswerForm;
  #done = false;
  /** A policy re-encodes the body (`compress`): `complete()` waits for its end. */
  #held = false;
  /** The re-encoded body's size is `#bytes`: the handler's count no longer applies. */
  #recounted = false;
  /** `complete()` was asked for while held. */
  #completeAsked = false;
  #rid: string | null = null;

  // The request as it goes to the member.
  #path: string;
  #query: string;
  /** The path and query the client asked for (normalised), whatever a `rewrite` makes of them. */
  readonly clientPath: string;
  readonly clientQuery: string;
  #editedHeaders: EditedHeaders | null = null;
  #upstreamHost: string | null = null;
  #forwardHeaders: HeaderWalk | null = null;

  // What happened.
  #status = 0;
  #bytes = 0;
  #upstreamMember = "-";
  #upstreamAttempts = 0;
  /**
   * Seconds to connect to the member (0 on a kept-alive connection); -1: no member tried.
   * Written by the HTTP/1 client, which times each attempt through `UpstreamTiming`.
   */
  upstreamConnect = -1;
  /** Seconds from the start of the member attempt to its response head; -1: none. */
  upstreamHeader = -1;
  #fromMember = false;
  #memberDate: string | null = null;
  #surplus = false;
  #cache = "-";
  #holdAffinityCookie = false;
  #affinityCookie: string | null = null;

  // How it ends.
  #ending = AT_ANSWER;
  #closeConnection = false;

  /** The connection's TLS session for the access log (the session's). */
  readonly tls: TlsLogFields;

  constructor(init: ExchangeInit) {
    const s = init.session;
    this.session = s;
    this.req = s.req;
    this.peer = s.peer;
    this.secure = s.secure;
    this.serverPort = s.port;
    this.tls = s.tls;
    this.serverAddr = s.address;
    this.remotePort = s.peerPort;
    this.#form = s.form;
    this.#path = this.clientPath = init.path;
    this.#query = this.clientQuery = init.query;
    this.authority = init.authority;
    this.peerTrusted = init.peerTrusted;
    this.client = init.client;
    this.stats = init.stats;
    this.start = init.start;
    this.#log = init.log;
    this.bodyTimeout = init.bodyTimeout;
    const span = this.span = init.span;
    if (span !== null) this.#traceRequest(span);
  }

  /** The server span's attributes known when the request arrives. */
  #traceRequest(span: Span): void {
    const req = this.req;
    const method = spanMethod(req.method);
    span.name = method.name;
    span.set("http.request.method", method.attribute);
    if (method.original !== undefined) span.set("http.request.method_original", method.original);
    span.set("url.path", this.#path);
    span.set("url.scheme", this.secure ? "https" : "http");
    span.set("server.address", hostName(this.authority));
    if (this.serverPort > 0) span.set("server.port", this.serverPort);
    span.set("client.address", this.client);
    span.set("network.protocol.version", PROTOCOL_VERSION[this.session.protocol]);
    const ua = req.headers.get("user-agent");
    if (ua !== null) span.set("user_agent.original", ua);
    span.set("scalws.tenant", this.stats.tenant);
    span.set("scalws.app", this.stats.app);
  }

  /** The server span's attributes known at the end, then its end. */
  #traceAnswer(span: Span): void {
    const route = this.#route;
    if (route !== "") {
      span.name = spanMethod(this.req.method).name + " " + route;
      span.set("http.route", route);
    }
    if (this.#status > 0) span.set("http.response.status_code", this.#status);
    span.set("scalws.cache", this.#cache);
    if (this.#status >= 500) {
      span.status = STATUS_ERROR;
      span.set("error.type", String(this.#status));
    }
    span.finish();
  }

  /** The route the request matched: its configured path (the server span's `http.route`). */
  routed(path: string): void {
    this.#route = path;
  }

  // The request as it goes to the member -------------------------------------------------

  /** Normalised path used for routing and sent upstream (a `rewrite` policy changes it). */
  get path(): string {
    return this.#path;
  }

  /** `?...` or "" (a `rewrite` policy whose target has `?` changes it). */
  get query(): string {
    return this.#query;
  }

  /** A `rewrite` policy's new path (normalised), and query when its target sets one. */
  rewrite(path: string, query: string = this.#query): void {
    this.#path = path;
    this.#query = query;
  }

  /** Request headers as edited by route policies (an overlay), or null: the client's own. */
  get editedHeaders(): EditedHeaders | null {
    return this.#editedHeaders;
  }

  /** The request headers, editable: an overlay made on the first edit (no copy). */
  editHeaders(): EditedHeaders {
    return this.#editedHeaders ??= new EditedHeaders(this.req.headers);
  }

  /** The Host a `headers` policy sends to the member instead of the usual one, or null. */
  get upstreamHost(): string | null {
    return this.#upstreamHost;
  }

  /** Sends `host` as the member's Host (a `headers` policy). */
  sendHost(host: string): void {
    this.#upstreamHost = host;
  }

  /**
   * Headers sent to the member instead of the client's (the cache's revalidations put their
   * own validators in); null sends the client's.
   */
  get forwardHeaders(): HeaderWalk | null {
    return this.#forwardHeaders;
  }

  /** Sends `headers` to the member instead of the client's (null: the client's again). */
  forwardWith(headers: HeaderWalk | null): void {
    this.#forwardHeaders = headers;
  }

  // What happened -------------------------------------------------------------------------

  /** The answer's status; 0 until one is known. */
  get status(): number {
    return this.#status;
  }

  /** Body bytes sent to the client (the access log's `bytes`). */
  get bytes(): number {
    return this.#bytes;
  }

  /** The answer is `status`, with `bytes` of body when known now. */
  answered(status: number, bytes?: number): void {
    this.#status = status;
    if (bytes !== undefined) this.#bytes = bytes;
  }

  /** The answer's body was sent: `bytes` of it (known at its end for a streamed body). */
  sent(bytes: number): void {
    // A re-encoded body (`holdCompletion`) counts its own bytes at its end.
    if (!this.#held && !this.#recounted) this.#bytes = bytes;
  }

  /** The member of the latest attempt; `-` before any. */
  get upstreamMember(): string {
    return this.#upstreamMember;
  }

  /** Members tried. */
  get upstreamAttempts(): number {
    return this.#upstreamAttempts;
  }

  /**
   * An attempt on `member` (its address) begins. Its tracing span is the handler's
   * (`AttemptSpan`, started by the proxy loop and the PHP handler).
   */
  attempt(member: string): void {
    this.#upstreamAttempts++;
    this.#upstreamMember = member;
  }

  /** Set when the answer is a member's (not one scalwsd made itself). */
  get fromMember(): boolean {
    return this.#fromMember;
  }

  /**
   * The member's `Date` when its answer's headers leave it out (scalwsd's HTTP/1 client does,
   * like nginx): the cache computes freshness and age with it (RFC 9111 4.2). Null: none.
   */
  get memberDate(): string | null {
    return this.#memberDate;
  }

  /** The answer is the member's; `date` its `Date` when its headers leave it out. */
  memberAnswered(date: string | null): void {
    this.#fromMember = true;
    this.#memberDate = date;
  }

  /** The member sent bytes past its answer's end (a lying Content-Length): never stored. */
  get surplus(): boolean {
    return this.#surplus;
  }

  /** The member sent bytes past its answer's end. */
  memberOverran(): void {
    this.#surplus = true;
  }

  /** The cache's result for the access log (`hit`, `miss`, ...); `-` without a cache. */
  get cache(): string {
    return this.#cache;
  }

  /** The cache's result. */
  cacheVerdict(result: string): void {
    this.#cache = result;
  }

  /**
   * Set by the cache around the handler it wraps: scalwsd's own affinity cookie is then kept
   * here rather than put in the answer, and the cache adds it at delivery, so that it is never
   * stored and never makes an answer uncacheable.
   */
  get holdAffinityCookie(): boolean {
    return this.#holdAffinityCookie;
  }

  /** The cache wraps the handler: the affinity cookie is held, not put in the answer. */
  holdAffinityCookies(): void {
    this.#holdAffinityCookie = true;
  }

  /** Holds `cookie` (a `Set-Cookie` value) for the cache to add at delivery. */
  holdCookie(cookie: string): void {
    this.#affinityCookie = cookie;
  }

  /** The held `Set-Cookie` value, once (null: none). */
  takeAffinityCookie(): string | null {
    const c = this.#affinityCookie;
    this.#affinityCookie = null;
    return c;
  }

  // How it ends ---------------------------------------------------------------------------

  /** The streamed body's end calls `complete()`, not the dispatcher. */
  get deferred(): boolean {
    return this.#ending === AT_BODY_END;
  }

  /** The body streams on after the answer is passed on, the exchange completed already. */
  get streaming(): boolean {
    return this.#ending === STREAMING;
  }

  /** A handler whose answer body streams: its end calls `complete()`. */
  deferCompletion(): void {
    this.#ending = AT_BODY_END;
  }

  /** Completed when the answer is passed on after all (a failure, or an answer dropped). */
  cancelDeferral(): void {
    if (this.#ending === AT_BODY_END) this.#ending = AT_ANSWER;
  }

  /** A handler whose answer body streams without calling `complete()` (a file). */
  markStreaming(): void {
    this.#ending = STREAMING;
  }

  /** Set with an answer that leaves the request body unread: the connection must close. */
  get closeConnection(): boolean {
    return this.#closeConnection;
  }

  /** The connection closes after this answer (its request body is left unread). */
  closeAfter(): void {
    this.#closeConnection = true;
  }

  // The answer ----------------------------------------------------------------------------

  /**
   * The answer `status`, `headers` (lower-case pairs, the callee's to edit) and `body`, made as
   * the front that serves the request writes it: a `FrontAnswer` on scalwsd's own HTTP/1.1
   * front, a `Response` for Deno.serve or for a wrapper that reads answers. `onWritten` (own
   * front only) is told once the answer was written.
   */
  answer(
    status: number,
    headers: [string, string][],
    body: AnswerBody,
    onWritten: ((ok: boolean) => void) | null = null,
  ): Answer {
    return this.#form.make(status, headers, body, this.req.method === "HEAD", onWritten);
  }

  /** From now on `answer` makes `Response`s: a wrapper (route policies) reads and edits them. */
  answerAsResponse(): void {
    this.#form = WEB_FORM;
  }

  #interim = true;

  /**
   * A member's interim answer (`102`, `103 Early Hints`) goes to the client at once, where the
   * front can send one (HTTP/1.1 on scalwsd's own front); it is never the request's answer.
   */
  interim(status: number, fields: readonly [string, string][]): void {
    if (this.#interim) this.session.interim?.(status, fields);
  }

  /** A request made for no client (the cache's background refresh): no interim answers. */
  noInterim(): void {
    this.#interim = false;
  }

  /** The request id: a trusted proxy's (`server.request_id.header`), else a new one; made once. */
  get requestId(): string {
    if (this.#rid === null) {
      const kept = this.peerTrusted ? this.req.headers.get(requestIdHeaderLower()) : null;
      this.#rid = kept !== null && keepable(kept) ? kept : newRequestId();
    }
    return this.#rid;
  }

  /**
   * A policy re-encodes the answer's body (`compress`): the exchange completes when that body
   * ends (`releaseCompletion`), with its size as the access log's `bytes`, not the handler's.
   */
  holdCompletion(): void {
    this.#held = true;
  }

  /**
   * The re-encoded body ended after `bytes`; null: it was cancelled (the client left, or a policy
   * replaced it), and the handler's count stands. Completes if it was asked to meanwhile.
   */
  releaseCompletion(bytes: number | null): void {
    if (!this.#held) return;
    this.#held = false;
    if (bytes !== null) {
      this.#recounted = true;
      this.#bytes = bytes;
    }
    if (this.#completeAsked) this.complete();
  }

  /** Records metrics and writes the access log line, once. */
  complete(): void {
    if (this.#done) return;
    if (this.#held) {
      this.#completeAsked = true;
      return;
    }
    this.#done = true;
    const seconds = (performance.now() - this.start) / 1000;
    this.stats.record(this.#status, seconds);
    const span = this.span;
    if (span !== null) this.#traceAnswer(span);
    const log = this.#log;
    if (log.enabled) {
      const req = this.req;
      const h = req.headers;
      log.write({
        tenant: this.stats.tenant,
        app: this.stats.app,
        host: hostName(this.authority || (h.get("host") ?? "")),
        protocol: this.session.protocol,
        method: req.method,
        path: this.clientPath,
        status: this.#status,
        bytes: this.#bytes,
        duration: seconds,
        upstream_member: this.#upstreamMember,
        upstream_attempts: this.#upstreamAttempts,
        upstream_connect: this.upstreamConnect,
        upstream_header: this.upstreamHeader,
        client: this.client,
        cache: this.#cache,
        user_agent: h.get("user-agent"),
        referer: h.get("referer"),
        request_id: this.requestId,
        trace_id: span === null ? null : span.traceId,
        tls: this.tls.tls,
        tls_cipher: this.tls.cipher,
        tls_resumed: this.tls.resumed,
        sni: this.tls.sni,
      });
    }
  }
}

/** A request handler compiled from a runtime. */
export interface Handler {
  /** An answer made with `ex.answer` (or any `Response`). */
  handle(ex: Exchange): Answer | Promise<Answer>;
  /** Releases what the handler holds when its generation is retired. */
  close?(): void;
}
