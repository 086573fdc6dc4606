/**
 * Revalidating a stored response with the member (RFC 9111 4.3): the conditional headers to
 * send, whether a `304` applies to the entry, and the header update it brings (4.3.4, 3.2).
 */
import { opaqueTag } from "./conditional.ts";
import type { Entry } from "./entry.ts";

/** The validators to send: `If-None-Match` from the ETag, `If-Modified-Since` from Last-Modified. */
export function validators(e: Entry): [string, string][] {
  const out: [string, string][] = [];
  if (e.etag !== null) out.push(["if-none-match", e.etag]);
  if (e.lastModified !== null) out.push(["if-modified-since", e.lastModified]);
  return out;
}

/**
 * True when a `304` with `etag` (null when it has none) refreshes `e` (4.3.4): a strong
 * ETag in the 304 must be the entry's (a weak one or none matches what was asked).
 */
export function selects(e: Entry, etag: string | null): boolean {
  if (etag === null) return true;
  if (e.etag === null) return false;
  const a = opaqueTag(etag.trim());
  const b = opaqueTag(e.etag.trim());
  return a !== null && a === b;
}

/** Fields a 304 never changes in the stored head. */
const KEEP = new Set(["content-length", "content-encoding", "transfer-encoding", "content-range"]);
/** Fields that are not stored at all. */
const NOT_STORED = new Set(["age", "set-cookie", "connection", "keep-alive", "cache-status"]);

/**
 * The stored head after a `304` (3.2): each field the 304 carries replaces every stored
 * field of that name, except the framing ones; the rest is kept in order.
 */
export function updatedHeaders(
  stored: readonly [string, string][],
  fresh: readonly [string, string][],
): [string, string][] {
  const replaced = new Set<string>();
  for (const [k] of fresh) if (!KEEP.has(k) && !NOT_STORED.has(k)) replaced.add(k);
  const out: [string, string][] = [];
  for (const h of stored) if (!replaced.has(h[0])) out.push(h);
  for (const h of fresh) if (replaced.has(h[0])) out.push([h[0], h[1]]);
  return out;
}

/**
 * `pairs` with the member's `Date` (`memberDate`, the one scalwsd's HTTP/1 client keeps apart
 * from the fields) added when they have none: stored answers keep the member's `Date`, and a
 * hit carries it, not the time it was served (RFC 9111 4, 3.2).
 */
export function withMemberDate(
  pairs: [string, string][],
  memberDate: string | null | undefined,
): [string, string][] {
  if (memberDate === null || memberDate === undefined) return pairs;
  for (const h of pairs) if (h[0] === "date") return pairs;
  pairs.push(["date", memberDate]);
  return pairs;
}
