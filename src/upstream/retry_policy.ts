/**
 * When a failed attempt may be sent again: pool retries to another member, and the resend of a
 * request whose kept-alive connection turned out stale. Pure decisions from what the proxy knows.
 */

// Idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE): the HTTP/1 client's stale rules use them too.
import { isIdempotent, type UpstreamError } from "../http1/mod.ts";

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

/** The kind of a failed exchange with a member (not the client's), for `mayRetry`. */
export function failureKind(e: Pick<UpstreamError, "phase" | "written" | "timeout">): FailureKind {
  if (e.phase === "connect" || (e.phase === "write" && !e.written)) return "connect";
  if (e.phase === "body") return "broken_after_head";
  return e.timeout ? "timeout" : "broken_before_head";
}

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
