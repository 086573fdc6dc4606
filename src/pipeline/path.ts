/**
 * Path normalisation before routing: percent-encoded unreserved characters are decoded
 * (`/%61dmin` is `/admin`, RFC 3986 6.2.2.2; `%2F` stays), `.` and `..` segments are resolved,
 * empty segments (`//`) collapse, and nothing climbs above `/`. The common case, a path with no
 * dot segment and no double slash, is returned as is without allocating.
 */

import { decodeUnreserved } from "../base/mod.ts";

function needsWork(p: string): boolean {
  if (p.charCodeAt(0) !== 47) return true;
  for (let i = 1; i < p.length; i++) {
    const c = p.charCodeAt(i);
    if (c === 47 && p.charCodeAt(i - 1) === 47) return true;
    if (c === 46 && p.charCodeAt(i - 1) === 47) return true; // "/." or "/.."
    if (c === 37) return true; // "%": may hide an encoded dot or slash
  }
  return false;
}

function isDot(seg: string): boolean {
  return seg === "." || seg === "%2e" || seg === "%2E";
}

function isDotDot(seg: string): boolean {
  if (seg.length === 2) return seg === "..";
  return seg.length >= 4 && seg.length <= 6 && /^(?:\.|%2e){2}$/i.test(seg);
}

/** The normalised form of a request path (without query). Always starts with `/`. */
export function normalizePath(path: string): string {
  if (!needsWork(path)) return path;
  const parts = decodeUnreserved(path).split("/");
  const out: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const seg = parts[i];
    if (seg === "" || isDot(seg)) continue;
    if (isDotDot(seg)) {
      out.pop();
      continue;
    }
    out.push(seg);
  }
  const last = parts[parts.length - 1];
  const trailing = parts.length > 1 && (last === "" || isDot(last) || isDotDot(last));
  const joined = "/" + out.join("/");
  return trailing && out.length > 0 ? joined + "/" : joined;
}
