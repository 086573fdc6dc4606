/**
 * scalwsd's HTTP/1.1 client to upstream members: one `Connector` and `ConnPool` per member,
 * `send` per request.
 */

export { Connector } from "./connector.ts";
export { ConnPool, type ConnPoolOptions } from "./conn_pool.ts";
export { send, SMALL_BODY } from "./send.ts";
export {
  buildRequestHead,
  FRAMING_CHUNKED,
  FRAMING_NONE,
  HeadBuffer,
  requestFraming,
} from "./request_head.ts";
export { isIdempotent, mayResendStale, STALE_IDLE_MIN } from "./stale.ts";
export { caCertsFor, systemRoots } from "./tls_roots.ts";
export { UpstreamError, type UpstreamErrorKind, type UpstreamPhase } from "./upstream_error.ts";
export type {
  Bytes,
  FinishListener,
  HeaderSource,
  HeadSource,
  OutboundRequest,
  SendOptions,
  SendStats,
  Socket,
  SocketFactory,
  TlsSettings,
  UpgradedConnection,
  UpstreamResponse,
} from "./types.ts";
