import type { ProxyRuntime } from "../config/types.ts";
import type {
  FinishListener,
  HeadSource,
  OutboundRequest,
  SendOptions,
  SendStats,
  UpstreamResponse,
} from "../http1/types.ts";
import type { UpstreamError } from "../http1/upstream_error.ts";
import type { Exchange } from "../pipeline/exchange.ts";
import type { PreparedBody } from "./proxy_body.ts";
import { tunnel, upgradeHeaders } from "./websocket.ts";

/** The head of one attempt: the client's request as the member should see it. */
class Head implements HeadSource {
  constructor(
    readonly headers: Headers,
    readonly host: string,
    readonly clientHost: string,
    readonly peer: string,
    readonly peerTrusted: boolean,
    readonly proto: "http" | "https",
    readonly upgrade: boolean,
  ) {}
}

/** The request to send to a member whose Host (without `preserve_host`) is `authority`. */
export function outbound(
  ex: Exchange,
  rt: ProxyRuntime,
  authority: string,
  body: PreparedBody,
  upgrade = false,
): OutboundRequest {
  return {
    method: ex.req.method,
    target: ex.query.length === 0 ? ex.path : ex.path + ex.query,
    head: new Head(
      upgrade ? upgradeHeaders(ex.req.headers) : ex.req.headers,
      rt.preserve_host ? ex.authority : authority,
      ex.authority,
      ex.peer,
      ex.peerTrusted,
      ex.secure ? "https" : "http",
      upgrade,
    ),
    body: body.source(),
    bodyLength: body.length,
  };
}

/**
 * Per-request send options and the end of the response body in one object: releases what the
 * attempt holds, counts bytes, writes the access log.
 */
export abstract class Attempt implements SendOptions, FinishListener {
  readonly onFinish: FinishListener = this;
  constructor(
    readonly connectTimeout: number,
    readonly responseTimeout: number,
    readonly stats: SendStats,
    protected readonly ex: Exchange,
  ) {}

  bodyFinished(ok: boolean, bytes: number, cancelled = false): void {
    this.ended(ok, cancelled);
    this.ex.bytes = bytes;
    if (this.ex.deferred) this.ex.complete();
  }

  /** Called once when the response body is done (or the attempt is dropped). */
  /** `cancelled`: the client stopped reading the body, which says nothing about the member. */
  protected abstract ended(ok: boolean, cancelled: boolean): void;
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
): Response {
  if (res.upgrade !== undefined) return tunnel(ex, res, cookie);
  const headers = res.headers;
  if (cookie !== undefined) headers.push(["set-cookie", cookie]);
  if (res.bodyCut === true) {
    // Part of the client's body is still unread: the connection cannot carry another request.
    ex.closeConnection = true;
    headers.push(["connection", "close"]);
  }
  ex.status = res.status;
  const body = res.body;
  if (body instanceof ReadableStream) ex.deferred = true;
  else if (body !== null) {
    ex.bytes = body.length;
    // Deno.serve writes the length of a byte body itself; one header fewer to convert.
    for (let i = 0; i < headers.length; i++) {
      if (headers[i][0] === "content-length") {
        headers.splice(i, 1);
        break;
      }
    }
  }
  // Deno.serve has a fast path for a lone content-type given as a plain object.
  return new Response(body as BodyInit | null, {
    status: res.status,
    headers: headers.length === 1 && headers[0][0] === "content-type"
      ? { "content-type": headers[0][1] }
      : headers,
  });
}
