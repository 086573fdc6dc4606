/**
 * The `Cache-Status` response header (RFC 9211) with the cache named `scalwsd`.
 */

/** The cache's name in `Cache-Status`. */
export const CACHE_NAME = "scalwsd";

/** Why a request went to the member (the `fwd` parameter). */
export type Forward = "uri-miss" | "miss" | "stale" | "request" | "bypass";

/** `scalwsd; hit; ttl=N` (N negative when a stale entry was served). */
export function hitStatus(ttl: number, detail?: string): string {
  return `${CACHE_NAME}; hit; ttl=${ttl}${detail !== undefined ? `; detail=${detail}` : ""}`;
}

/**
 * `scalwsd; fwd=miss; fwd-status=200; stored; ttl=60` and the like. `ttl` is only given
 * with `stored` (the new entry's lifetime).
 */
export function forwardStatus(opts: {
  fwd: Forward;
  status?: number;
  stored?: boolean;
  ttl?: number;
  collapsed?: boolean;
}): string {
  let s = `${CACHE_NAME}; fwd=${opts.fwd}`;
  if (opts.status !== undefined) s += `; fwd-status=${opts.status}`;
  if (opts.stored === true) {
    s += "; stored";
    if (opts.ttl !== undefined) s += `; ttl=${opts.ttl}`;
  }
  if (opts.collapsed === true) s += "; collapsed";
  return s;
}
