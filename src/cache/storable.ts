/**
 * Whether a shared cache may store an answer (RFC 9111 3): a `GET` with a final status (not
 * `206`, not `304`), `s-maxage`, `max-age` or `Expires` from the member (or heuristic freshness
 * for the statuses RFC 9110 marks heuristically cacheable; for those, `no-cache` with a validator
 * and no freshness is stored to be revalidated on every use), and none of: `no-store` (request or response), `private`, `Authorization`
 * without `public` / `s-maxage` / `must-revalidate`, `Set-Cookie` (unless the operator opted
 * in), `Vary: *`, partial content, a malformed `Cache-Control` or `Vary`, and a request
 * header the member may reflect that is not part of the key (the poisoning rule).
 */
import type { CacheControl } from "./cache_control.ts";
import { freshnessLifetime, HEURISTIC_STATUS, heuristicLifetime } from "./freshness.ts";
import { parseVary, VARY_ANY } from "./vary.ts";

/**
 * The final statuses scalwsd understands (those RFC 9110 section 15 defines): with
 * `must-understand` (RFC 9111 5.2.2.3) only these are stored, and then `no-store` is ignored.
 * Any other final status (`299`, `599`) is stored like these when it has explicit freshness.
 */
export const UNDERSTOOD_STATUS = new Set([
  200,
  201,
  202,
  203,
  204,
  205,
  206,
  300,
  301,
  302,
  303,
  304,
  305,
  307,
  308,
  400,
  401,
  402,
  403,
  404,
  405,
  406,
  407,
  408,
  409,
  410,
  411,
  412,
  413,
  414,
  415,
  416,
  417,
  421,
  422,
  426,
  500,
  501,
  502,
  503,
  504,
  505,
]);

/** Whether a final status may be stored at all: not `206` (no partial content) nor `304`. */
export function storableStatus(status: number): boolean {
  return status >= 200 && status <= 999 && status !== 206 && status !== 304;
}

/**
 * Request headers that a member or framework may reflect into an answer (URLs, redirects,
 * links) and that are not in the cache key: a request carrying one is not stored unless the
 * header is in `key_headers` or the answer's `Vary`. `X-Forwarded-For/-Host/-Proto` are not
 * listed: scalwsd sets them itself (it believes them only from `trusted_proxies`).
 */
export const UNKEYED_REFLECTED = [
  "forwarded",
  "x-forwarded-scheme",
  "x-forwarded-port",
  "x-forwarded-prefix",
  "x-forwarded-server",
  "x-host",
  "x-original-host",
  "x-original-url",
  "x-rewrite-url",
  "x-http-method-override",
  "x-http-method",
  "x-method-override",
];

/** What the decision reads from the request. */
export interface RequestFacts {
  readonly method: string;
  readonly cc: CacheControl;
  readonly authorization: boolean;
  /** Names of `UNKEYED_REFLECTED` headers the request carries. */
  readonly reflected: readonly string[];
}

/** What the decision reads from the answer. */
export interface ResponseFacts {
  readonly status: number;
  readonly cc: CacheControl;
  readonly expires: string | null;
  /** The member's Date in ms, or the time the answer arrived (see `freshnessLifetime`). */
  readonly date: number;
  readonly vary: string | null;
  readonly setCookie: boolean;
  /** `Last-Modified`, for heuristic freshness. */
  readonly lastModified?: string | null;
  /** The answer carries a validator (`ETag` or `Last-Modified`). */
  readonly validator?: boolean;
}

export type Storability =
  | { readonly ok: true; readonly lifetime: number; readonly vary: readonly string[] }
  | { readonly ok: false; readonly reason: string };

/** Decides whether the answer may be stored; `keyHeaders` are lower-case. */
export function storability(
  req: RequestFacts,
  res: ResponseFacts,
  opts: {
    readonly storeSetCookie: boolean | "keep";
    readonly keyHeaders: readonly string[];
    /** Cap on heuristic freshness in seconds; 0 or absent: off. */
    readonly heuristicMax?: number;
  },
): Storability {
  if (req.method !== "GET") return { ok: false, reason: "method" };
  if (!storableStatus(res.status)) return { ok: false, reason: "status" };
  if (req.cc.noStore) return { ok: false, reason: "request no-store" };
  const cc = res.cc;
  if (cc.invalid) return { ok: false, reason: "malformed cache-control" };
  if (cc.mustUnderstand) {
    // RFC 9111 5.2.2.3: a status the cache understands may be stored despite no-store.
    if (!UNDERSTOOD_STATUS.has(res.status)) return { ok: false, reason: "must-understand" };
  } else if (cc.noStore) return { ok: false, reason: "no-store" };
  if (cc.private) return { ok: false, reason: "private" };
  if (req.authorization && !cc.public && cc.sMaxage < 0 && !cc.mustRevalidate) {
    return { ok: false, reason: "authorization" };
  }
  if (res.setCookie && !opts.storeSetCookie) return { ok: false, reason: "set-cookie" };
  const vary = parseVary(res.vary);
  if (vary === null) return { ok: false, reason: "malformed vary" };
  if (vary.length === 1 && vary[0] === VARY_ANY) return { ok: false, reason: "vary *" };
  for (const h of req.reflected) {
    if (!vary.includes(h) && !opts.keyHeaders.includes(h)) {
      return { ok: false, reason: `unkeyed ${h}` };
    }
  }
  let lifetime = freshnessLifetime(cc, res.expires, res.date);
  if (lifetime < 0) {
    lifetime = heuristicLifetime(
      res.status,
      res.lastModified ?? null,
      res.date,
      opts.heuristicMax ?? 0,
    );
  }
  if (lifetime < 0 && cc.noCache && res.validator === true && HEURISTIC_STATUS.has(res.status)) {
    // RFC 9111 3: a status defined as heuristically cacheable may be stored without freshness;
    // `no-cache` with a validator is stored stale, to be revalidated (a 304) on every use.
    lifetime = 0;
  }
  if (lifetime < 0) return { ok: false, reason: "no explicit freshness" };
  return { ok: true, lifetime, vary };
}
