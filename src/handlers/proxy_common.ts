/**
 * What every proxy form shares around one attempt: the request head a member gets
 * (`outbound`: the client's or the policies' headers, the cache's validators, the Host), the
 * answers scalwsd makes on a member's or a failed client body's behalf, and `toResponse`, the
 * one path from a member's answer to the client's (made by `ex.answer` for the front that
 * serves the request; a 101 becomes a WebSocket tunnel).
 *
 * It does not send anything (`http1/`, `fastcgi/`) and does not loop over attempts
 * (`proxy_loop.ts`).
 *
 * @module
 */

import type { Answer } from "../front/mod.ts";
import type { ProxyRuntime } from "../config/mod.ts";
import type {
  HeaderSource,
  HeadSource,
  OutboundRequest,
  UpstreamError,
  UpstreamResponse,
} from "../http1/mod.ts";
import { type Exchange, requestIdHeader, requestIdHeaderLower } from "../pipeline/mod.ts";
import { plain } from "../base/mod.ts";
import { statusText } from "../wire/mod.ts";
import type { PreparedBody } from "./proxy_body.ts";
import type { AttemptSpan } from "./attempt_span.ts";
import { tunnel, upgradeHeaders } from "./websocket.ts";

/** What `outbound` reads of an attempt. */
export interface AttemptTarget {
  readonly ex: Exchange;
  readonly rt: ProxyRuntime;
  /** The Host sent to the member without `preserve_host`. */
  readonly authority: string;
  readonly body: PreparedBody;
  /** A WebSocket handshake passed on. */
  readonly upgrade: boolean;
  /** The attempt's client span when the request is traced, else null. */
  readonly trace: AttemptSpan | null;
}

/** The head of one attempt: the client's request as the member should see it. */
class Head implements HeadSource {
  readonly headers: HeaderSource;
  readonly host: string;
  readonly clientHost: string;
  readonly peer: string;
  readonly peerTrusted: boolean;
  readonly proto: "http" | "https";
  readonly upgrade: boolean;
  readonly requestIdHeader: string;
  readonly requestIdLower: string;
  readonly requestId: string;
  readonly traceparent: string | undefined;
  readonly tracestate: string | undefined;

  constructor(a: AttemptTarget) {
    const ex = a.ex;
    this.upgrade = a.upgrade;
    // Policies' edits (editedHeaders) under the cache's validators (forwardHeaders).
    const own = ex.editedHeaders ?? ex.req.headers;
    this.headers = a.upgrade ? upgradeHeaders(own) : ex.forwardHeaders ?? own;
    this.host = ex.upstreamHost ?? (a.rt.preserve_host ? ex.authority : a.authority);
    this.clientHost = ex.authority;
    this.peer = ex.peer;
    this.peerTrusted = ex.peerTrusted;
    this.proto = ex.secure ? "https" : "http";
    this.requestIdHeader = requestIdHeader();
    this.requestIdLower = requestIdHeaderLower();
    this.requestId = ex.requestId;
    // A traced request: the member gets this attempt as its parent.
    const trace = a.trace;
    this.traceparent = trace === null ? undefined : trace.traceparent();
    this.tracestate = trace === null ? undefined : trace.span.traceState;
  }
}

/** The request an attempt sends to its member. */
export function outbound(a: AttemptTarget): OutboundRequest {
  const ex = a.ex;
  return {
    method: ex.req.method,
    target: ex.query.length === 0 ? ex.path : ex.path + ex.query,
    head: new Head(a),
    body: a.body.source(),
    bodyLength: a.body.length,
  };
}

/**
 * Text bodies of scalwsd's own answers by status: the reason phrase of the statuses it answers
 * on a member's or a client body's behalf (400, 408, 413, 502, 503, 504), else "Error".
 */
export function reason(status: number): string {
  const own = status === 400 || status === 408 || status === 413 ||
    (status >= 502 && status <= 504);
  return own ? statusText(status) : "Error";
}

const CLOSE = { connection: "close" };

/**
 * The answer when the client's body failed (400, 408, 413) or was still arriving at the
 * response timeout (504): the rest of the body is not read, so the connection closes.
 */
export function clientBodyFailed(ex: Exchange, status: number): Response {
  ex.answered(status);
  ex.closeAfter();
  return plain(status, reason(status), CLOSE);
}

/** 504 for timeouts, 502 for everything else scalwsd answers on a member's behalf. */
export function errorStatus(e: UpstreamError): number {
  return e.timeout ? 504 : 502;
}

/**
 * The client's response from a member's answer, with an extra `Set-Cookie` when given; a 101
 * to a WebSocket handshake becomes a tunnel.
 */
export function toResponse(
  ex: Exchange,
  res: UpstreamResponse,
  cookie: string | undefined,
): Answer {
  if (res.upgrade !== undefined) return tunnel(ex, res, cookie);
  const headers = res.headers;
  if (cookie !== undefined) {
    if (ex.holdAffinityCookie) ex.holdCookie(cookie);
    else headers.push(["set-cookie", cookie]);
  }
  if (res.bodyCut === true) {
    // Part of the client's body is still unread: the connection cannot carry another request.
    ex.closeAfter();
    headers.push(["connection", "close"]);
  }
  ex.answered(res.status);
  ex.memberAnswered(res.date ?? null);
  // The member's answer as it is: on scalwsd's own front no Response, no Headers, and a
  // streamed body pulled straight from the member's connection.
  const reader = res.reader;
  if (reader !== undefined) {
    ex.deferCompletion();
    return ex.answer(res.status, headers, reader);
  }
  const body = res.body;
  if (body instanceof ReadableStream) ex.deferCompletion();
  else if (body !== null) ex.sent(body.length);
  return ex.answer(res.status, headers, body);
}
