/**
 * Invalidation by unsafe methods (RFC 9111 4.4): a request whose method is not known to be
 * safe (`POST`, `PUT`, `DELETE`, `PATCH`, and any method scalwsd does not know, such as
 * `M-SEARCH`) that the member answered with a non-error status removes the stored entries of
 * its own URL and of the URLs in its `Location` and `Content-Location` on the same host.
 */

/** Methods registered as safe (RFC 9110 9.2.1 and the IANA method registry): never invalidate. */
export const SAFE = new Set(["GET", "HEAD", "OPTIONS", "TRACE", "PROPFIND", "REPORT", "SEARCH"]);

/** True when `method` answered with `status` must invalidate. */
export function invalidates(method: string, status: number): boolean {
  return !SAFE.has(method) && status >= 200 && status < 400;
}

/**
 * The path and query (`/a?b`) of `ref` (absolute or relative to `base`, a full URL) when it
 * is on `base`'s scheme and host; null otherwise or when malformed.
 */
export function sameHostTarget(ref: string, base: string): string | null {
  let u: URL;
  let b: URL;
  try {
    b = new URL(base);
    u = new URL(ref, b);
  } catch {
    return null;
  }
  if (u.protocol !== b.protocol || u.host !== b.host) return null;
  return u.pathname + u.search;
}
