/** When a request that failed on a stale kept-alive connection may be sent once more. */

/** A connection must have sat idle this long (ms) before a written request may be resent. */
export const STALE_IDLE_MIN = 1000;

/** Methods the spec treats as idempotent for resends and retries. */
export function isIdempotent(method: string): boolean {
  return method === "GET" || method === "HEAD" || method === "OPTIONS" || method === "PUT" ||
    method === "DELETE";
}

/**
 * The resend rule for a request that failed with EOF or reset before any response byte on a
 * reused connection: none of it written -> any method; else only a bodyless idempotent request
 * on a connection idle for at least 1 s. A written POST or PATCH is never resent.
 */
export function mayResendStale(
  method: string,
  bodyless: boolean,
  wroteAny: boolean,
  idleMs: number,
): boolean {
  if (!wroteAny) return true;
  return bodyless && isIdempotent(method) && idleMs >= STALE_IDLE_MIN;
}
