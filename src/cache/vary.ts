/**
 * Vary (RFC 9111 4.1): the request headers a stored response was chosen by, and the
 * comparison of a new request's values with the stored ones. Values are compared after
 * normalising what the header's own specification allows: whitespace around list commas
 * and runs of spaces always, letter case for the `Accept-*` headers (case-insensitive tokens).
 * An absent header only matches an absent one.
 */

/** Header pairs lookup: `Headers.get`. */
export interface HeaderGet {
  get(name: string): string | null;
}

/** `Vary: *`: never stored. */
export const VARY_ANY = "*";

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * The lower-cased, sorted, de-duplicated field names of a `Vary` value; `["*"]` for `*`
 * anywhere; null for a malformed value (not stored).
 */
export function parseVary(value: string | null): string[] | null {
  if (value === null) return [];
  const names = new Set<string>();
  for (const raw of value.split(",")) {
    const n = raw.trim().toLowerCase();
    if (n.length === 0) continue;
    if (n === VARY_ANY) return [VARY_ANY];
    if (!TOKEN.test(n)) return null;
    names.add(n);
  }
  return [...names].sort();
}

const CASELESS = new Set(["accept", "accept-encoding", "accept-language", "accept-charset"]);

/** A request header value as Vary compares it; null when absent. */
export function normaliseValue(name: string, value: string | null): string | null {
  if (value === null) return null;
  let v = value.trim().replace(/[ \t]*,[ \t]*/g, ",").replace(/[ \t]+/g, " ");
  if (CASELESS.has(name)) v = v.toLowerCase();
  return v;
}

/** The normalised values of `names` in `headers` (same order as `names`). */
export function varyValues(names: readonly string[], headers: HeaderGet): (string | null)[] {
  const out: (string | null)[] = new Array(names.length);
  for (let i = 0; i < names.length; i++) out[i] = normaliseValue(names[i], headers.get(names[i]));
  return out;
}

/** True when `headers` carries the same normalised values as `stored` for `names`. */
export function varyMatches(
  names: readonly string[],
  stored: readonly (string | null)[],
  headers: HeaderGet,
): boolean {
  for (let i = 0; i < names.length; i++) {
    if (normaliseValue(names[i], headers.get(names[i])) !== stored[i]) return false;
  }
  return true;
}
