/**
 * Single byte ranges (RFC 9110 14.1.2) served from a stored object. Only `bytes=a-b`,
 * `bytes=a-` and `bytes=-n` with one range are understood; anything else (several ranges,
 * other units, malformed) is null and the request goes to the member untouched.
 */

/** An inclusive byte span, or `unsatisfiable` (416). */
export type ByteRange = { readonly start: number; readonly end: number } | "unsatisfiable";

/** The range `header` asks of an object of `size` bytes; null when not understood. */
export function parseRange(header: string, size: number): ByteRange | null {
  const m = /^bytes=[ \t]*([0-9]{0,15})-([0-9]{0,15})[ \t]*$/.exec(header.trim());
  if (m === null) return null;
  if (m[1] === "" && m[2] === "") return null;
  if (size === 0) return "unsatisfiable";
  if (m[1] === "") {
    const n = Number(m[2]);
    if (n === 0) return "unsatisfiable";
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  let end = m[2] === "" ? Infinity : Number(m[2]);
  if (end < start) return null;
  if (start >= size) return "unsatisfiable";
  if (end >= size) end = size - 1;
  return { start, end };
}
