/**
 * The primary cache key: scheme, host (lower-cased, default port dropped), the normalised
 * path and the query (unless `ignore_query`). `key_headers` are not part of this string:
 * they are compared like `Vary` headers on every variant under the key, so that purging or
 * invalidating a URL reaches all of them.
 */

/** The host part of a key: `authority` lower-cased, without the scheme's default port. */
export function keyHost(authority: string, secure: boolean): string {
  const a = authority.toLowerCase();
  const def = secure ? ":443" : ":80";
  if (a.endsWith(def)) return a.slice(0, a.length - def.length);
  return a;
}

/** The host name of a key host: without the port. */
export function hostOnly(host: string): string {
  if (host.startsWith("[")) {
    const end = host.indexOf("]");
    return end < 0 ? host : host.slice(0, end + 1);
  }
  const colon = host.lastIndexOf(":");
  return colon < 0 ? host : host.slice(0, colon);
}

/** `http://example.com/a/b?x=1`. `query` is `?...` or "". */
export function cacheKey(
  secure: boolean,
  host: string,
  path: string,
  query: string,
): string {
  return (secure ? "https://" : "http://") + host + path + query;
}
