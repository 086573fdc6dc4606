/** Shapes shared by the HTTP/1.1 client: requests in, responses out, options and listeners. */

/** Bytes backed by a plain ArrayBuffer: what `new Response()` accepts as a body. */
export type Bytes = Uint8Array<ArrayBuffer>;

/** The byte stream under a connection: a `Deno.Conn` (TCP, Unix, TLS) or a test double. */
export type Socket = Pick<Deno.Conn, "read" | "write" | "close">;

/** Anything that opens sockets to one member; `Connector` in production. */
export interface SocketFactory {
  /** Rejects with `UpstreamError` (phase `connect`). */
  connect(timeoutMs: number): Promise<Socket>;
  /**
   * Its sockets' reads wait for data or a close, as real sockets do, so a pool may keep a read
   * pending on an idle connection to notice the member closing it. Test doubles that answer
   * end-of-file when their script runs out leave this unset.
   */
  readonly watchable?: boolean;
}

/** TLS towards a member. Build one object per pool and share it across its members. */
export interface TlsSettings {
  /** PEM certificates trusted in addition to the system roots (the pool's `tls.ca_file`). */
  readonly caCerts: readonly string[];
  /** SNI and the name the certificate must carry; "" means the member's host. */
  readonly serverName: string;
}

/** Header pairs as `Headers.forEach` hands them out: names lower-case. */
export interface HeaderSource {
  forEach(fn: (value: string, name: string) => void, thisArg?: unknown): void;
}

/** What the request head is built from, normally taken from an incoming `Request`. */
export interface HeadSource {
  /** The client's headers (an incoming `Request`'s `Headers`), walked once per request. */
  readonly headers: HeaderSource;
  /** The `Host` sent to the member: the client's Host (preserve_host) or the member authority. */
  readonly host: string;
  /** The Host the client asked for; sent as `X-Forwarded-Host` ("" sends none). */
  readonly clientHost: string;
  /** The direct peer's address (`remoteAddr.hostname`); "" sends no `X-Forwarded-For`. */
  readonly peer: string;
  /** The direct peer is a trusted proxy: its `X-Forwarded-*` values are kept or extended. */
  readonly peerTrusted: boolean;
  /** Scheme of the client's connection to scalwsd; `X-Forwarded-Proto` for untrusted peers. */
  readonly proto: "http" | "https";
  /** A WebSocket upgrade: `Upgrade` is passed on with `Connection: upgrade`. */
  readonly upgrade: boolean;
  /**
   * The request id header as configured (`X-Request-Id`) and its lower-case name: the client's
   * own is dropped, `requestId` sent instead. Absent or empty: none.
   */
  readonly requestIdHeader?: string;
  readonly requestIdLower?: string;
  readonly requestId?: string;
  /**
   * The attempt's W3C `traceparent` when the request is traced: sent instead of the client's
   * `traceparent` and `tracestate`, with `tracestate` when not empty. Absent: the client's
   * are passed on as received.
   */
  readonly traceparent?: string;
  readonly tracestate?: string;
}

/** A request to send to a member. */
export interface OutboundRequest {
  readonly method: string;
  /** Path and query as received (origin form). */
  readonly target: string;
  readonly head: HeadSource;
  /**
   * `null` for none; a `Uint8Array` is sent with its length and can be resent; a `BodyPull`
   * (or a stream, pulled the same way) is sent once, chunk by chunk.
   */
  readonly body: null | Uint8Array | BodyPull | ReadableStream<Uint8Array>;
  /** Length of a stream body; -1 (unknown) sends it chunked. Ignored for other bodies. */
  readonly bodyLength: number;
}

/** Counters the caller owns; `send` increments them. */
export interface SendStats {
  /** Requests sent again on a fresh connection because a kept-alive one was stale. */
  staleResends: number;
}

/** Told once when the response body of a successful `send` has been delivered or failed. */
export interface FinishListener {
  /**
   * `ok` is false when the body broke, was malformed or the consumer cancelled it;
   * `cancelled` tells the last case apart (the client went away, not the member). `bytes`
   * counts decoded body bytes delivered. `surplus`: the member had sent bytes past the end of
   * the answer (a Content-Length shorter than the body), so the answer must not be cached.
   * `error`: why a body broke (an `UpstreamError` of phase `body`), when it did.
   * Never called when `send` itself rejects.
   */
  bodyFinished(
    ok: boolean,
    bytes: number,
    cancelled?: boolean,
    surplus?: boolean,
    error?: unknown,
  ): void;
}

/** Per-attempt settings of `send`. One object may serve many requests. */
export interface SendOptions {
  /** Milliseconds for TCP connect plus TLS handshake; 0 means no limit. */
  readonly connectTimeout: number;
  /**
   * Milliseconds from the end of writing the request head to a complete response head
   * (request body upload included); it also bounds reading a small body. 0 means no limit.
   */
  readonly responseTimeout: number;
  /** Receives `staleResends += 1` per stale-connection resend. */
  readonly stats?: SendStats;
  readonly onFinish?: FinishListener;
  /** Receives the attempt's connect and response-head times (the access log's). */
  readonly timing?: UpstreamTiming;
  /**
   * Receives each interim (1xx) response before the final one (`102`, `103 Early Hints`, ...;
   * not `100`: scalwsd answers `Expect: 100-continue` itself, and not `101`). Absent: skipped.
   */
  readonly onInterim?: (status: number, fields: readonly [string, string][]) => void;
}

/** Seconds, as the access log's `upstream_connect` and `upstream_header` report them. */
export interface UpstreamTiming {
  /** Connecting (TCP, TLS) to the member; 0 on a kept-alive connection. */
  upstreamConnect: number;
  /** From the start of the attempt to the response head. */
  upstreamHeader: number;
}

/** A 101 Switching Protocols answer: the connection now belongs to the caller. */
export interface UpgradedConnection {
  /** The raw connection, removed from its pool; the caller closes it. */
  readonly conn: Socket;
  /** Bytes the member sent after the 101 head (a copy). */
  readonly leftover: Bytes;
}

/**
 * A streamed body pulled chunk by chunk, without a `ReadableStream`: one `read` at a time, each
 * chunk the caller's to keep; null at the clean end; a rejection when the body broke (never a
 * clean end for a cut body). `cancel` drops the rest (and the connection).
 */
export interface BodyReader {
  read(): Promise<Bytes | null>;
  /**
   * When present: the same chunks as views of a buffer reused by the next call (no copy),
   * for a consumer that is done with each chunk before it asks for the next.
   */
  readView?(): Promise<Bytes | null>;
  cancel(): void;
}

/**
 * A request body pulled chunk by chunk, without a `ReadableStream`: one `read` at a time, null
 * at its clean end, a rejection when it broke. A chunk is the caller's until its next `read`.
 * `cancel` drops the rest and must settle a pending `read` at once (null or a rejection): the
 * response timeout and the body timeouts rely on it.
 */
export interface BodyPull {
  read(): Promise<Uint8Array | null>;
  /**
   * When present: reads the next bytes of the body straight into `into` (one copy at most),
   * giving their count, or null at the end. For bodies of a known length.
   */
  readInto?(into: Uint8Array): Promise<number | null>;
  cancel(): void;
}

/** A member's answer. */
export interface UpstreamResponse {
  readonly status: number;
  readonly statusText: string;
  /**
   * Names lower-case, in received order, `set-cookie` lines kept apart. Hop-by-hop headers
   * and those named in `Connection` are removed, except on a 101 which keeps them all.
   * `content-length` is kept (Deno.serve corrects it for byte bodies and keeps it for HEAD).
   */
  readonly headers: [string, string][];
  /** The member's `Date`, which `headers` leaves out (null when it sent none). */
  readonly date?: string | null;
  /**
   * `null` (HEAD, 1xx, 204, 304, 101); a `Uint8Array` for small bodies received whole, which
   * may be a view of the connection's read buffer: hand it to `new Response()` (which copies)
   * before awaiting anything; otherwise a stream that pulls from the member.
   */
  readonly body: Bytes | ReadableStream<Bytes> | null;
  /**
   * Present when `body` is a stream: the same body pulled directly. Read one of them, never
   * both; the stream is only made when `body` is first read.
   */
  readonly reader?: BodyReader;
  /** Present for status 101 only. */
  readonly upgrade?: UpgradedConnection;
  /**
   * True when the member answered before it had the whole request body (an early 413, say)
   * and the rest was not sent: the client's connection has unread body bytes and must close.
   */
  readonly bodyCut?: boolean;
}
