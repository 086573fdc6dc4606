/**
 * scalwsd's HTTP/1.1 client to upstream members: one `Connector` and `ConnPool` per member,
 * `send` per request, and the pieces the FastCGI client rides on (the pooled connection
 * `Http1Conn`, the request-body writers, `UpstreamError` and the watchdog). File names say the
 * role: `write_*` lays out what goes to a member, `parse_*` and `read_*` take in what comes back.
 * It knows nothing of routes or pools' decisions (`upstream/`).
 *
 * @module
 */

export { Connector } from "./connector.ts";
export { ConnPool, type ConnPoolOptions } from "./conn_pool.ts";
export { Http1Conn } from "./member_conn.ts";
export { send, SMALL_BODY } from "./send.ts";
export {
  buildRequestHead,
  FRAMING_CHUNKED,
  FRAMING_NONE,
  HeadBuffer,
  requestFraming,
} from "./write_request_head.ts";
export { writeAll, writeRest } from "./write_request_body.ts";
export { isIdempotent, mayResendStale, STALE_IDLE_MIN } from "./stale.ts";
export { asPull, StreamPull } from "./stream_pull.ts";
export { caCertsFor, systemRoots } from "./tls_roots.ts";
export {
  clientError,
  ioError,
  malformed,
  UpstreamError,
  type UpstreamErrorKind,
  type UpstreamPhase,
} from "./upstream_error.ts";
export { type Expirable, watchdog } from "./watchdog.ts";
export type {
  BodyPull,
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
  UpstreamTiming,
} from "./types.ts";
