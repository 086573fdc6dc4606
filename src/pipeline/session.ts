/**
 * One request as the front that received it presents it to the pipeline: the request view,
 * how an answer is made for that front, and the connection's bookkeeping. Both fronts implement
 * it (pingora's `Session` over H1 and H2 is the model): scalwsd's own HTTP/1.1 front
 * (`server/front_conn.ts`, one object per connection refilled per request, so its fast path
 * allocates nothing for it) and `Deno.serve` for HTTP/2 (`server/serve_session.ts`, one per
 * request). The dispatcher, the handlers and the access log see a front only through it.
 *
 * It is not the exchange: what the pipeline decides about a request (route, status, member,
 * cache verdict) lives on the `Exchange`, which keeps the session it came from.
 *
 * @module
 */

import type { Answer, AnswerForm, HeadLimits } from "../front/mod.ts";

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

/** What a session served by scalwsd's own HTTP/1.1 front offers a WebSocket tunnel. */
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

/** What a session's `finish` reads of the exchange it answered. */
export interface Ending {
  /** The answer left the request body unread: the connection closes after it. */
  readonly closeConnection: boolean;
  /** The body's end completes the exchange (a streamed member body). */
  readonly deferred: boolean;
  /** The body streams on after the answer is passed on (a file). */
  readonly streaming: boolean;
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

/** The protocol names a session reports (the access log's `protocol`). */
export type Protocol = "HTTP/1.0" | "HTTP/1.1" | "HTTP/2";

/** One request of one front; see the module comment. */
export interface Session {
  readonly protocol: Protocol;
  /** The client's request: method, headers, body. */
  readonly req: ClientRequest;
  /** Path and query as received (`*` for `OPTIONS *`). */
  readonly target: string;
  /** The Host field, an absolute-form target's or the HTTP/2 authority; null: none. */
  readonly authority: string | null;
  /**
   * Why `authority` is null although the request named one (HTTP/2: a Host field that differs
   * from `:authority`), answered 400; absent: it named none.
   */
  readonly authorityError?: string;
  /** The direct peer's address (`"unix"` on a Unix socket). */
  readonly peer: string;
  /** The request came over TLS. */
  readonly secure: boolean;
  /** The connection's TLS session as the access log reports it. */
  readonly tls: TlsLogFields;
  /** The port of the listener that accepted the connection (PHP's `SERVER_PORT`); 0: unknown. */
  readonly port: number;
  /** The local address that accepted the connection (PHP's `SERVER_ADDR`); "": unknown. */
  readonly address: string;
  /** The direct peer's port (PHP's `REMOTE_PORT`); 0: unknown (a Unix socket). */
  readonly peerPort: number;
  /** Other requests in flight on the connection (HTTP/2 streams); 0 on HTTP/1.1. */
  readonly streams: number;
  /** The request's Content-Length, or -1 when it has none. */
  readonly contentLength: number;
  /** The raw connection for a tunnel after a 101 (HTTP/1.1 front only), else null. */
  readonly upgrade: FrontUpgrade | null;
  /** How answers are made for this front: `FrontAnswer`s or `Response`s. */
  readonly form: AnswerForm;
  /** 414, 431, or 0: the request head against `server.limits`. */
  headLimit(limits: HeadLimits): number;
  /** `strict_sni`: the connection's certificate does not serve `host` (421). */
  misdirected(host: string): boolean;
  /**
   * Calls `onGone` once if the client goes away (closes its connection, resets its stream)
   * before this request is answered; false when the front cannot tell now (HTTP/1.1: a body
   * still unread or a pipelined request behind it).
   */
  watchGone(onGone: () => void): boolean;
  /** Bookkeeping: the request reached the dispatcher. */
  started(): void;
  /**
   * Bookkeeping: `answer` is the request's answer (draining: the connection closes after it);
   * returns what the front passes on (Deno.serve: always a `Response`).
   */
  finish(ex: Ending, answer: Answer, draining: boolean): Answer;
  /**
   * Sends an interim (1xx) answer before the final one; absent where the front cannot (Deno.serve
   * has no way to send one). Nothing for HTTP/1.0 clients.
   */
  interim?(status: number, fields: readonly [string, string][]): void;
}
