/**
 * Splits a request URL string (`http://host:port/path?query`) into path and query without
 * building a `URL` object.
 */
export function pathStart(url: string): number {
  const scheme = url.indexOf("://");
  const slash = url.indexOf("/", scheme < 0 ? 0 : scheme + 3);
  return slash < 0 ? url.length : slash;
}

/** The authority part of an absolute URL string. */
export function urlAuthority(url: string): string {
  const scheme = url.indexOf("://");
  const from = scheme < 0 ? 0 : scheme + 3;
  const end = pathStart(url);
  return url.slice(from, end);
}
