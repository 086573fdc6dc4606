/**
 * `Cache-Control` (RFC 9111 section 5.2) parsed into the directives a shared cache acts on.
 * Unknown directives are ignored, as the RFC asks; a directive the cache does understand but
 * whose value is malformed (`max-age=abc`, a repeated `max-age`) sets `invalid`, and the cache
 * then neither stores the response nor trusts the request's freshness limits.
 */

/** Seconds are -1 when the directive is absent. */
export interface CacheControl {
  maxAge: number;
  sMaxage: number;
  staleWhileRevalidate: number;
  staleIfError: number;
  /** Request only; -1 absent, Infinity for a bare `max-stale`. */
  maxStale: number;
  /** Request only. */
  minFresh: number;
  noStore: boolean;
  /** Also set by the qualified form `no-cache="field"` (treated as unqualified). */
  noCache: boolean;
  /** Also set by the qualified form `private="field"`. */
  private: boolean;
  public: boolean;
  mustRevalidate: boolean;
  proxyRevalidate: boolean;
  onlyIfCached: boolean;
  /** Response only (RFC 8246): the answer will not change while it is fresh. */
  immutable: boolean;
  /** Response only (RFC 9111 5.2.2.3): store only when the status is understood. */
  mustUnderstand: boolean;
  /** A known directive had a malformed or repeated value. */
  invalid: boolean;
}

/** Largest delta-seconds kept (RFC 9111 1.2.2: 2^31). */
export const DELTA_MAX = 2_147_483_648;

/** A fresh record of no directives, for a parser to fill. */
export function emptyCacheControl(): CacheControl {
  return {
    maxAge: -1,
    sMaxage: -1,
    staleWhileRevalidate: -1,
    staleIfError: -1,
    maxStale: -1,
    minFresh: -1,
    noStore: false,
    noCache: false,
    private: false,
    public: false,
    mustRevalidate: false,
    proxyRevalidate: false,
    onlyIfCached: false,
    immutable: false,
    mustUnderstand: false,
    invalid: false,
  };
}

/** The shared result of an absent header: never mutated by callers. */
export const NO_CACHE_CONTROL: Readonly<CacheControl> = Object.freeze(emptyCacheControl());

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** delta-seconds: digits only; larger values are capped at `DELTA_MAX`. -2 when malformed. */
function deltaSeconds(v: string | undefined): number {
  if (v === undefined || v.length === 0 || !/^[0-9]+$/.test(v)) return -2;
  const n = Number(v);
  return n > DELTA_MAX ? DELTA_MAX : n;
}

/**
 * Splits a field value on commas outside quoted strings; null on an unterminated quote. Shared
 * by `Cache-Control` and the targeted fields (`targeted.ts`).
 */
export function splitOutsideQuotes(value: string): string[] | null {
  const out: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (quoted) {
      if (c === 0x5c) i++;
      else if (c === 0x22) quoted = false;
    } else if (c === 0x22) quoted = true;
    else if (c === 0x2c) {
      out.push(value.slice(start, i));
      start = i + 1;
    }
  }
  if (quoted) return null;
  out.push(value.slice(start));
  return out;
}

/** Parses one or more `Cache-Control` field values (joined with commas); null gives the empty set. */
export function parseCacheControl(value: string | null): CacheControl {
  if (value === null || value.length === 0) return NO_CACHE_CONTROL as CacheControl;
  const cc = emptyCacheControl();
  const parts = splitOutsideQuotes(value);
  if (parts === null) {
    cc.invalid = true;
    return cc;
  }
  const seen = new Set<string>();
  for (const raw of parts) {
    const part = raw.trim();
    if (part.length === 0) continue;
    const eq = part.indexOf("=");
    const name = (eq < 0 ? part : part.slice(0, eq)).trim().toLowerCase();
    let arg = eq < 0 ? undefined : part.slice(eq + 1).trim();
    if (!TOKEN.test(name)) {
      cc.invalid = true;
      continue;
    }
    if (arg !== undefined && arg.length >= 2 && arg[0] === '"' && arg[arg.length - 1] === '"') {
      arg = arg.slice(1, -1);
    }
    const repeated = seen.has(name);
    seen.add(name);
    switch (name) {
      case "max-age":
      case "s-maxage":
      case "stale-while-revalidate":
      case "stale-if-error":
      case "min-fresh": {
        const n = deltaSeconds(arg);
        if (n < 0 || repeated) {
          cc.invalid = true;
          break;
        }
        if (name === "max-age") cc.maxAge = n;
        else if (name === "s-maxage") cc.sMaxage = n;
        else if (name === "stale-while-revalidate") cc.staleWhileRevalidate = n;
        else if (name === "stale-if-error") cc.staleIfError = n;
        else cc.minFresh = n;
        break;
      }
      case "max-stale": {
        const n = arg === undefined ? Infinity : deltaSeconds(arg);
        if (n === -2 || repeated) cc.invalid = true;
        else cc.maxStale = n;
        break;
      }
      case "no-store":
        cc.noStore = true;
        break;
      case "no-cache":
        cc.noCache = true;
        break;
      case "private":
        cc.private = true;
        break;
      case "public":
        cc.public = true;
        break;
      case "must-revalidate":
        cc.mustRevalidate = true;
        break;
      case "proxy-revalidate":
        cc.proxyRevalidate = true;
        break;
      case "only-if-cached":
        cc.onlyIfCached = true;
        break;
      case "immutable":
        cc.immutable = true;
        break;
      case "must-understand":
        cc.mustUnderstand = true;
        break;
      default:
        // RFC 9111 5.2.3: extensions a cache does not understand are ignored.
        break;
    }
  }
  return cc;
}
