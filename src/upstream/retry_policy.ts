/**
 * When a failed attempt may be sent again: pool retries to another member, and the resend of a
 * request whose kept-alive connection turned out stale. Pure decisions from what the proxy knows.
 */

/**
 * How an attempt failed:
 * `connect`: connect error or connect timeout, before any of the request was written;
 * `status`: the member answered 502, 503 or 504;
 * `timeout`: no response head within `response_timeout`;
 * `broken_before_head`: the connection broke after the request was written, before a head;
 * `broken_after_head`: it broke after the response head was received.
 */
export type FailureKind =
  | "connect"
  | "status"
  | "timeout"
  | "broken_before_head"
  | "broken_after_head";

/** What `mayRetry` decides from. */
export interface RetryInput {
  /** Attempts made so far for this request, the failed one included (1 after the first). */
  readonly attempts: number;
  /** The pool's `retries` setting (further attempts allowed). */
  readonly retries: number;
  /** Members in the pool. */
  readonly memberCount: number;
  /** Whether an available member this request has not tried exists. */
  readonly untriedExists: boolean;
  /** Whether any of the response was passed on to the client. */
  readonly sentToClient: boolean;
  readonly method: string;
  readonly failure: FailureKind;
  /** No body, or a body kept in memory (Content-Length up to 64 KiB). */
  readonly bodyReplayable: boolean;
  /** A WebSocket upgrade: never retried. */
  readonly websocket: boolean;
}

/** GET, HEAD, OPTIONS, PUT and DELETE (the spec's list; methods are case-sensitive). */
export function isIdempotent(method: string): boolean {
  switch (method) {
    case "GET":
    case "HEAD":
    case "OPTIONS":
    case "PUT":
    case "DELETE":
      return true;
    default:
      return false;
  }
}

/**
 * Whether a failed attempt is sent again to another member: nothing reached the client, the
 * pool has more than one member and an untried one, `retries` is not used up, the body can be
 * sent again, no WebSocket; and either the attempt failed before the request was written (any
 * method), or the method is idempotent and the member answered 502/503/504, sent no head in
 * time or broke the connection before the head. Never after the head was passed on.
 */
export function mayRetry(input: RetryInput): boolean {
  if (input.websocket || input.sentToClient) return false;
  if (input.memberCount <= 1 || !input.untriedExists) return false;
  if (input.attempts - 1 >= input.retries) return false;
  if (!input.bodyReplayable) return false;
  switch (input.failure) {
    case "connect":
      return true;
    case "status":
    case "timeout":
    case "broken_before_head":
      return isIdempotent(input.method);
    case "broken_after_head":
      return false;
  }
}

/** Idle time after which a written bodyless idempotent request may be resent on a stale connection. */
export const STALE_RESEND_IDLE_MS = 1000;

/** What `staleResendAllowed` decides from. */
export interface StaleResendInput {
  /** Whether any of the request was written to the stale connection. */
  readonly written: boolean;
  readonly method: string;
  readonly hasBody: boolean;
  /** How long the connection sat idle in the pool before this request, in ms. */
  readonly idleMs: number;
}

/**
 * Whether a request that met a stale kept-alive connection is sent once more on a fresh one to
 * the same member: always when none of it was written; after it was written only a bodyless
 * idempotent request on a connection idle for at least 1 s. A written POST or PATCH never.
 */
export function staleResendAllowed(input: StaleResendInput): boolean {
  if (!input.written) return true;
  return isIdempotent(input.method) && !input.hasBody && input.idleMs >= STALE_RESEND_IDLE_MS;
}
