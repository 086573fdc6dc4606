import type { HistogramSeries, Series } from "../observe/metrics.ts";
import type { AccessLog } from "../observe/access_log.ts";
import type { Metrics } from "../observe/families.ts";
import type { Answer } from "../front/answer.ts";
import { FrontRequest } from "../front/front_request.ts";
import { hostName } from "./hosts.ts";
import { keepable, newRequestId, requestIdHeaderLower } from "./request_id.ts";

/** A request's fields as handlers read them: a `Headers`, or the front's parsed head. */
export interface RequestFields {
  /** Any case; duplicates joined by ", ". */
  get(name: string): string | null;
  has(name: string): boolean;
  /** Lower-case names. */
  forEach(fn: (value: string, name: string) => void, thisArg?: unknown): void;
}

/**
 * The client's request as handlers see it, whichever front served it: a `Request` from
 * Deno.serve (HTTP/2), or scalwsd's own front's `FrontRequest` (HTTP/1.1), which builds no
 * Web object unless a handler asks for its body.
 */
export interface ClientRequest {
  readonly method: string;
  /** The absolute URL (the front builds it on demand from the authority and the target). */
  readonly url: string;
  readonly headers: RequestFields;
  /** Null when the request has no body. */
  readonly body: ReadableStream<Uint8Array> | null;
}

/** Header pairs walked like `Headers.forEach`. */
export interface HeaderWalk {
  forEach(fn: (value: string, name: string) => void, thisArg?: unknown): void;
}

/** What an exchange served by scalwsd's own front offers a WebSocket tunnel. */
export interface FrontUpgrade {
  /**
   * Takes the client's raw connection after the 101 is written; the front stops serving it and
   * counts it open until `ended` is called.
   */
  handOver(): {
    conn: Pick<Deno.Conn, "read" | "write" | "close">;
    leftover: Uint8Array;
    ended: () => void;
  };
}
import type { EditedHeaders } from "./edited_headers.ts";

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
 * What an `Exchange` is made of. The front that received the request fills it in (today the
 * dispatcher behind `Deno.serve`; a front with its own HTTP/1.1 parser does the same): one
 * object literal per request, whose fields the exchange copies.
 */
export interface ExchangeInit {
  /** The client's request: method, headers, body. */
  readonly req: ClientRequest;
  /** Normalised path (`normalizePath`), used for routing and sent upstream. */
  readonly path: string;
  /** The query as received, `?` included, or "". */
  readonly query: string;
  /** The Host header value, or the HTTP/2 authority; "" when the request has none. */
  readonly authority: string;
  /** The direct peer's address (`"unix"` on a Unix socket). */
  readonly peer: string;
  /** The direct peer is in `trusted_proxies`. */
  readonly peerTrusted: boolean;
  /** The client address after `trusted_proxies` (the peer itself when untrusted). */
  readonly client: string;
  /** The request came over TLS. */
  readonly secure: boolean;
  /** The application's counters (requests by class, duration, stale resends). */
  readonly stats: AppStats;
  /** `performance.now()` when the request arrived: the access log's duration starts there. */
  readonly start: number;
  /** Where `complete()` writes the access log line. */
  readonly log: AccessLog;
}

/** What the access log says of the connection a request came on (`tls`, `tls_cipher`, ...). */
export interface TlsLogFields {
  /** `TLSv1.2`, `TLSv1.3`; `TLS` when the runtime does not say which; `-` in the clear. */
  readonly tls: string;
  /** The cipher suite's IANA name; `-` in the clear or when not known. */
  readonly cipher: string;
  /** Whether the TLS session was resumed; false in the clear, null when not known. */
  readonly resumed: boolean | null;
  /** The SNI name; `-` for none, in the clear, or when not known. */
  readonly sni: string;
}

/** {@link TlsLogFields} of a request in the clear. */
export const IN_THE_CLEAR: TlsLogFields = { tls: "-", cipher: "-", resumed: false, sni: "-" };

/**
 * One client request on its way through the pipeline: what the handlers need to know about it
 * and what the access log reports at the end. One object per request, no closures.
 *
 * Lifecycle: the front builds it (`new Exchange({...})`) once the host is known, the pipeline
 * and the handler set `status` (and `bytes`, `upstream*`, `closeConnection`), and `complete()`
 * records it once: the front calls it when the answer is passed on, unless the handler set
 * `deferred` (a streamed body), in which case the body's end calls it.
 */
export class Exchange {
  status = 0;
  bytes = 0;
  upstreamMember = "-";
  upstreamAttempts = 0;
  /** Seconds to connect to the member (0 on a kept-alive connection); -1: no member tried. */
  upstreamConnect = -1;
  /** Seconds from the start of the member attempt to its response head; -1: none. */
  upstreamHeader = -1;
  /** Set by a handler whose response body streams; it calls `complete()` when the body ends. */
  deferred = false;
  /** Set by a handler whose response body streams without calling `complete()` (a file). */
  streaming = false;
  /** `server.limits.body_read_timeout` in ms (0: none): longest wait for a body chunk. */
  bodyTimeout = 0;
  /** Set with an answer that leaves the request body unread: the connection must close. */
  closeConnection = false;
  /** The cache's result for the access log (`hit`, `miss`, ...); `-` without a cache. */
  cache = "-";
  /**
   * Set by the cache around the handler it wraps: scalwsd's own affinity cookie is then kept
   * in `affinityCookie` rather than put in the answer, and the cache adds it at delivery, so
   * that it is never stored and never makes an answer uncacheable.
   */
  holdAffinityCookie = false;
  /** The `Set-Cookie` value held while `holdAffinityCookie`; null: none. */
  affinityCookie: string | null = null;
  /**
   * Headers sent to the member instead of the client's (the cache's revalidations put their
   * own validators in); null sends the client's.
   */
  forwardHeaders: HeaderWalk | null = null;
  /** The member sent bytes past its answer's end (a lying Content-Length): never stored. */
  surplus = false;
  /** Request headers as edited by route policies (a copy), or null: the client's own. */
  editedHeaders: EditedHeaders | null = null;
  /** The Host a `headers` policy sends to the member instead of the usual one, or null. */
  upstreamHost: string | null = null;
  /** Set when the answer is a member's (not one scalwsd made itself). */
  fromMember = false;
  /**
   * The member's `Date` when its answer's headers leave it out (scalwsd's HTTP/1 client does,
   * like nginx): the cache computes freshness and age with it (RFC 9111 4.2). Null: none.
   */
  memberDate: string | null = null;
  /** The port of the listener that accepted the request (PHP's `SERVER_PORT`); 0: unknown. */
  serverPort = 0;
  /** The local address that accepted the connection (PHP's `SERVER_ADDR`); "": unknown. */
  serverAddr = "";
  /** The direct peer's port (PHP's `REMOTE_PORT`); 0: unknown (a Unix socket). */
  remotePort = 0;
  /** Served by scalwsd's own HTTP/1.1 front: the raw connection for an upgrade; else null. */
  front: FrontUpgrade | null = null;
  /**
   * The handler may answer with a `FrontAnswer` instead of a `Response` (set by the front;
   * a wrapper that reads the answer, the cache or route policies, turns it off for the handler
   * it wraps).
   */
  rawAnswer = false;
  private done = false;
  private rid: string | null = null;

  readonly req: ClientRequest;
  /** Normalised path used for routing and sent upstream (a `rewrite` policy changes it). */
  path: string;
  /** `?...` or "" (a `rewrite` policy whose target has `?` changes it). */
  query: string;
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
  private readonly log: AccessLog;

  /** The connection's TLS session for the access log; set by the front for TLS ones. */
  tls: TlsLogFields = IN_THE_CLEAR;

  constructor(init: ExchangeInit) {
    this.req = init.req;
    this.path = init.path;
    this.query = init.query;
    this.authority = init.authority;
    this.peer = init.peer;
    this.peerTrusted = init.peerTrusted;
    this.client = init.client;
    this.secure = init.secure;
    this.stats = init.stats;
    this.start = init.start;
    this.log = init.log;
  }

  /** The request id: a trusted proxy's (`server.request_id.header`), else a new one; made once. */
  get requestId(): string {
    if (this.rid === null) {
      const kept = this.peerTrusted ? this.req.headers.get(requestIdHeaderLower()) : null;
      this.rid = kept !== null && keepable(kept) ? kept : newRequestId();
    }
    return this.rid;
  }

  /** Records metrics and writes the access log line, once. */
  complete(): void {
    if (this.done) return;
    this.done = true;
    const seconds = (performance.now() - this.start) / 1000;
    this.stats.record(this.status, seconds);
    if (this.log.enabled) {
      const req = this.req;
      const h = req.headers;
      this.log.write({
        tenant: this.stats.tenant,
        app: this.stats.app,
        host: hostName(this.authority || (h.get("host") ?? "")),
        protocol: req instanceof FrontRequest
          ? (req.head.minor === 0 ? "HTTP/1.0" : "HTTP/1.1")
          : "HTTP/2",
        method: req.method,
        path: this.path,
        status: this.status,
        bytes: this.bytes,
        duration: seconds,
        upstream_member: this.upstreamMember,
        upstream_attempts: this.upstreamAttempts,
        upstream_connect: this.upstreamConnect,
        upstream_header: this.upstreamHeader,
        client: this.client,
        cache: this.cache,
        user_agent: h.get("user-agent"),
        referer: h.get("referer"),
        request_id: this.requestId,
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
  /** A `FrontAnswer` only when `ex.rawAnswer` is set. */
  handle(ex: Exchange): Answer | Promise<Answer>;
  /** Releases what the handler holds when its generation is retired. */
  close?(): void;
}
