/**
 * Targeted cache-control fields (RFC 9213): `CDN-Cache-Control`, or the name configured as
 * `cache.targeted_field`. Its value is a Structured Fields Dictionary (RFC 8941); when it is
 * present, non-empty and valid, it replaces `Cache-Control` and `Expires` for scalwsd's own
 * decisions (RFC 9213 2.1). Directives with a value of the wrong type are ignored.
 */
import type { CacheControl } from "./cache_control.ts";
import { DELTA_MAX, emptyCacheControl, splitOutsideQuotes } from "./cache_control.ts";

const KEY = "[a-z*][a-z0-9_\\-.*]*";
const BARE =
  '-?[0-9]{1,15}(?:\\.[0-9]{1,3})?|"(?:[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\["\\\\])*"|' +
  "[A-Za-z*][!#$%&'*+\\-.^_`|~0-9A-Za-z:/]*|:[A-Za-z0-9+/=]*:|\\?[01]";
const PARAMS = `(?:;[ ]*${KEY}(?:=(?:${BARE}))?)*`;
const INNER = `\\([ ]*(?:(?:${BARE})${PARAMS}(?:[ ]+(?:${BARE})${PARAMS})*[ ]*)?\\)`;
const MEMBER = new RegExp(`^(${KEY})(?:=((?:${BARE})|${INNER}))?${PARAMS}$`);

/**
 * The directives of a targeted field's value, or null when the value is absent, empty or not a
 * valid Structured Fields Dictionary (then `Cache-Control` applies, RFC 9213 2.1).
 */
export function parseTargeted(value: string | null): CacheControl | null {
  if (value === null) return null;
  const parts = splitOutsideQuotes(value.trim());
  if (parts === null) return null;
  const dict = new Map<string, string>();
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i].trim();
    // A dictionary has no empty member (a trailing comma or `a,,b` is a parse failure).
    if (p.length === 0) return null;
    const m = MEMBER.exec(p);
    if (m === null) return null;
    dict.set(m[1], m[2] ?? "?1");
  }
  const cc = emptyCacheControl();
  for (const [k, v] of dict) {
    const int = /^[0-9]{1,15}$/.test(v) ? Math.min(Number(v), DELTA_MAX) : -1;
    const yes = v === "?1";
    switch (k) {
      case "max-age":
        cc.maxAge = int;
        break;
      case "s-maxage":
        cc.sMaxage = int;
        break;
      case "stale-while-revalidate":
        cc.staleWhileRevalidate = int;
        break;
      case "stale-if-error":
        cc.staleIfError = int;
        break;
      case "no-store":
        cc.noStore = yes;
        break;
      case "no-cache":
        cc.noCache = yes;
        break;
      case "private":
        cc.private = yes;
        break;
      case "public":
        cc.public = yes;
        break;
      case "must-revalidate":
        cc.mustRevalidate = yes;
        break;
      case "proxy-revalidate":
        cc.proxyRevalidate = yes;
        break;
      case "immutable":
        cc.immutable = yes;
        break;
      default:
        break;
    }
  }
  return cc;
}
