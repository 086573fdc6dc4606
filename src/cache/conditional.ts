/**
 * Conditional requests against a stored response (RFC 9110 13.1 and 13.2.2): `If-None-Match`
 * with the weak comparison, then `If-Modified-Since` only when there is no `If-None-Match`.
 * A match means the client's copy is current: the cache answers `304`.
 */
import { parseHttpDate } from "./http_date.ts";

/** The opaque part of an entity tag (`W/"x"` and `"x"` -> `"x"`); null when malformed. */
export function opaqueTag(tag: string): string | null {
  const t = tag.startsWith("W/") ? tag.slice(2) : tag;
  if (t.length < 2 || t[0] !== '"' || t[t.length - 1] !== '"') return null;
  if (t.indexOf('"', 1) !== t.length - 1) return null;
  return t;
}

/** True when `If-None-Match: header` matches `etag` (weak comparison; `*` matches any). */
export function noneMatchMatches(header: string, etag: string | null): boolean {
  const h = header.trim();
  if (h === "*") return etag !== null;
  if (etag === null) return false;
  const mine = opaqueTag(etag.trim());
  if (mine === null) return false;
  // Entity tags hold no commas inside their quotes in practice; a quoted comma is kept whole.
  let start = 0;
  let quoted = false;
  for (let i = 0; i <= h.length; i++) {
    const c = i < h.length ? h.charCodeAt(i) : 0x2c;
    if (c === 0x22) quoted = !quoted;
    else if (c === 0x2c && !quoted) {
      const t = opaqueTag(h.slice(start, i).trim());
      if (t !== null && t === mine) return true;
      start = i + 1;
    }
  }
  return false;
}

/** What `notModified` needs of the request. */
export interface Conditionals {
  readonly ifNoneMatch: string | null;
  readonly ifModifiedSince: string | null;
}

/**
 * True when a GET or HEAD carrying `req`'s conditionals is answered `304` by a stored
 * response with `etag` and `lastModified` (`dateValue`: the stored `Date`, NaN if none).
 */
export function notModified(
  req: Conditionals,
  etag: string | null,
  lastModified: string | null,
  dateValue: number,
): boolean {
  if (req.ifNoneMatch !== null) return noneMatchMatches(req.ifNoneMatch, etag);
  if (req.ifModifiedSince === null) return false;
  const since = parseHttpDate(req.ifModifiedSince);
  if (Number.isNaN(since)) return false;
  let modified = parseHttpDate(lastModified);
  if (Number.isNaN(modified)) modified = dateValue;
  if (Number.isNaN(modified)) return false;
  return modified <= since;
}

/** Headers a 304 carries from the stored 200 (RFC 9110 15.4.5). */
export const NOT_MODIFIED_HEADERS = new Set([
  "cache-control",
  "content-location",
  "date",
  "etag",
  "expires",
  "vary",
  "last-modified",
]);
