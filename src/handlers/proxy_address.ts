import type { AddressTarget, ProxyRuntime } from "../config/types.ts";
import { send } from "../http1/send.ts";
import type { ConnPool } from "../http1/conn_pool.ts";
import type { UpstreamResponse } from "../http1/types.ts";
import { UpstreamError } from "../http1/upstream_error.ts";
import type { Exchange, Handler } from "../pipeline/exchange.ts";
import { plain } from "../base/plain.ts";
import { prepareBody } from "./proxy_body.ts";
import { Attempt, errorStatus, outbound, toResponse } from "./proxy_common.ts";
import { isWebSocketUpgrade } from "./websocket.ts";

class AddressAttempt extends Attempt {
  protected ended(): void {}
}

/** Text bodies of scalwsd's own answers by status. */
export function reason(status: number): string {
  switch (status) {
    case 400:
      return "Bad Request";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Error";
  }
}

const CLOSE = { connection: "close" };

/**
 * The answer when the client's body failed (400, 408, 413) or was still arriving at the
 * response timeout (504): the rest of the body is not read, so the connection closes.
 */
export function clientRefusal(ex: Exchange, status: number): Response {
  ex.status = status;
  ex.closeConnection = true;
  return plain(status, reason(status), CLOSE);
}

/**
 * The single-address form (`upstream: "http://..."`): one member, no retries, no ejection,
 * the shortest path through the proxy.
 */
export class AddressProxyHandler implements Handler {
  constructor(
    readonly runtime: ProxyRuntime,
    readonly target: AddressTarget,
    readonly conns: ConnPool,
    private readonly maxBody: number,
  ) {}

  async handle(ex: Exchange): Promise<Response> {
    const rt = this.runtime;
    let body = prepareBody(ex.req, this.maxBody, false, 0, ex.bodyTimeout);
    if (body instanceof Promise) body = await body;
    if (typeof body === "number") return clientRefusal(ex, body);
    const attempt = new AddressAttempt(rt.connect_timeout, rt.response_timeout, ex.stats, ex);
    let res: UpstreamResponse;
    try {
      const upgrade = rt.websocket && isWebSocketUpgrade(ex.req);
      res = await send(this.conns, outbound(ex, rt, this.target.authority, body, upgrade), attempt);
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      if (err.kind === "client") return clientRefusal(ex, body.clientFailure(err) || 400);
      const status = errorStatus(err);
      ex.status = status;
      return plain(status, reason(status));
    }
    return toResponse(ex, res, undefined);
  }
}
