/**
 * Percent-decoding of the unreserved characters (RFC 3986 2.3: letters, digits, `-`, `.`, `_`,
 * `~`), the normalisation RFC 3986 6.2.2.2 makes of every URI: `/%61dmin` and `/admin` are one
 * path. Other escapes (`%2F`, `%20`, `%25`...) are kept as they are, so no separator or `%`
 * appears that the client did not send. Not a general URI decoder.
 *
 * @module
 */

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

function isUnreserved(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) ||
    c === 45 || c === 46 || c === 95 || c === 126;
}

/** `s` with every `%XX` of an unreserved character decoded; `s` itself when there is none. */
export function decodeUnreserved(s: string): string {
  let i = s.indexOf("%");
  if (i < 0) return s;
  let out = "";
  let from = 0;
  while (i >= 0 && i + 2 < s.length) {
    const hi = hexValue(s.charCodeAt(i + 1));
    const lo = hexValue(s.charCodeAt(i + 2));
    const c = hi * 16 + lo;
    if (hi >= 0 && lo >= 0 && isUnreserved(c)) {
      out += s.slice(from, i) + String.fromCharCode(c);
      from = i + 3;
      i = s.indexOf("%", from);
    } else {
      i = s.indexOf("%", i + 1);
    }
  }
  return from === 0 ? s : out + s.slice(from);
}
