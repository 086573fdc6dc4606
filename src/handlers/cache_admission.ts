/**
 * Whether a member's answer is stored, and the entry it becomes (RFC 9111 section 3), and how
 * a 304 refreshes a stored entry (4.3.4). Pure apart from reading the answer's fields.
 */
import {
  type Bytes,
  type CacheControl,
  Entry,
  freshnessLifetime,
  parseAge,
  parseCacheControl,
  parseHttpDate,
  parseTargeted,
  storability,
  UNKEYED_REFLECTED,
  updatedHeaders,
  varyValues,
  withMemberDate,
} from "../cache/mod.ts";
import type { CacheConfig } from "../config/mod.ts";
import type { Answer } from "../front/mod.ts";
import type { Exchange, RequestFields } from "../pipeline/mod.ts";
import { HOP_BY_HOP } from "../wire/mod.ts";
import { fieldsOf } from "./cache_answers.ts";
import { ROUTE_FIELD, RouteFields } from "./cache_route.ts";

/** Response fields never stored (hop-by-hop, per-response, or written by Deno.serve). */
const NOT_STORED = new Set([
  "age",
  "set-cookie",
  ...HOP_BY_HOP,
  "content-length",
  "cache-status",
]);

/** Facts of an answer being considered for storing. */
export interface Admission {
  readonly status: number;
  readonly headers: RequestFields;
  readonly cc: CacheControl;
  readonly lifetime: number;
  readonly vary: readonly string[];
  readonly requestTime: number;
  readonly responseTime: number;
}

/** The route's cache settings an entry is made with. */
export interface StoreRules {
  readonly config: CacheConfig;
  /** `stale-while-revalidate` and `stale-if-error` caps, in seconds. */
  readonly swrCap: number;
  readonly sieCap: number;
  /** `tenant/app`: entries are tagged with it so a reload can drop them. */
  readonly owner: string;
  /** `server.cache.heuristic_max` in seconds (0: off). */
  readonly heuristicMax?: number;
  /** The route's tag (`cache_route.ts`): its entries select on `ROUTE_FIELD`; null: none. */
  readonly route?: string | null;
}

/** When a request went to the member and when its answer came (clock ms). */
export interface ExchangeTimes {
  readonly requestTime: number;
  readonly responseTime: number;
  /** The member's `Date` when the answer's fields leave it out (`Exchange.memberDate`). */
  readonly memberDate?: string | null;
}

/**
 * What `Expires` is measured from (RFC 9111 4.2.1: `Expires` minus `Date`): the member's
 * `Date` in ms, from the answer's fields or the one its HTTP/1 client kept apart
 * (`memberDate`), else `received` (RFC 9110 6.6.1). Ages are still computed from the fields'
 * `Date` only: a member's clock does not make scalwsd's entries older.
 */
export function expiresBase(
  h: RequestFields,
  memberDate: string | null | undefined,
  received: number,
): number {
  const d = parseHttpDate(h.get("date") ?? memberDate ?? null);
  return Number.isNaN(d) ? received : d;
}

/** The storing decision for `res`; null when it must not be stored. */
export function admission(
  rules: StoreRules,
  ex: Exchange,
  res: Answer,
  times: ExchangeTimes,
  rcc: CacheControl,
): Admission | null {
  const { requestTime, responseTime } = times;
  const rh = fieldsOf(res);
  // The request as the member got it: an `Authorization` that `basic_auth` checked and removed,
  // or a header a `headers` policy removed, never reached the member's answer.
  const h = ex.editedHeaders ?? ex.req.headers;
  let reflected: string[] | null = null;
  for (const name of UNKEYED_REFLECTED) {
    if (h.get(name) !== null) (reflected ??= []).push(name);
  }
  const targeted = parseTargeted(rh.get(rules.config.targeted_field));
  const cc = targeted ?? parseCacheControl(rh.get("cache-control"));
  const d = storability(
    {
      method: ex.req.method,
      cc: rcc,
      authorization: h.get("authorization") !== null,
      reflected: reflected ?? [],
    },
    {
      status: res.status,
      cc,
      // RFC 9213 2.1: a valid targeted field replaces Expires too.
      expires: targeted === null ? rh.get("expires") : null,
      date: expiresBase(rh, ex.memberDate, responseTime),
      vary: rh.get("vary"),
      setCookie: rh.get("set-cookie") !== null,
      lastModified: rh.get("last-modified"),
      validator: rh.get("etag") !== null || rh.get("last-modified") !== null,
    },
    {
      storeSetCookie: rules.config.store_set_cookie,
      keyHeaders: rules.config.key_headers,
      heuristicMax: rules.heuristicMax,
    },
  );
  if (!d.ok) return null;
  const cl = rh.get("content-length");
  if (cl !== null && Number(cl) > rules.config.max_object_size) return null;
  return {
    status: res.status,
    headers: rh,
    cc,
    lifetime: d.lifetime,
    vary: d.vary,
    requestTime,
    responseTime,
  };
}

/** The entry `a` and `body` make. */
export function makeEntry(rules: StoreRules, ex: Exchange, a: Admission, body: Bytes): Entry {
  const headers: [string, string][] = [];
  const keepCookies = rules.config.store_set_cookie === "keep";
  a.headers.forEach((v, k) => {
    if (!NOT_STORED.has(k)) headers.push([k, v]);
    else if (k === "set-cookie" && keepCookies) headers.push([k, v]);
  });
  withMemberDate(headers, ex.memberDate);
  const names = [...a.vary];
  for (const k of rules.config.key_headers) if (!names.includes(k)) names.push(k);
  const route = rules.route ?? null;
  if (route !== null) names.push(ROUTE_FIELD);
  const cc = a.cc;
  return new Entry({
    status: a.status,
    headers,
    body,
    requestTime: a.requestTime,
    responseTime: a.responseTime,
    dateValue: parseHttpDate(a.headers.get("date")),
    ageValue: parseAge(a.headers.get("age")),
    lifetime: a.lifetime,
    staleWhileRevalidate: Math.min(Math.max(0, cc.staleWhileRevalidate), rules.swrCap),
    staleIfError: Math.min(Math.max(0, cc.staleIfError), rules.sieCap),
    noCache: cc.noCache,
    mustRevalidate: cc.mustRevalidate || cc.proxyRevalidate,
    immutable: cc.immutable,
    etag: a.headers.get("etag"),
    lastModified: a.headers.get("last-modified"),
    selectNames: names,
    selectValues: varyValues(
      names,
      route === null ? ex.req.headers : new RouteFields(ex.req.headers, route),
    ),
    owner: rules.owner,
    own: !ex.fromMember,
  });
}

/** Applies a 304's header fields and times to `e` (RFC 9111 4.3.4). */
export function refreshEntry(
  rules: StoreRules,
  e: Entry,
  h: RequestFields,
  times: ExchangeTimes,
): void {
  const { requestTime, responseTime } = times;
  const fresh: [string, string][] = [];
  h.forEach((v, k) => fresh.push([k, v]));
  e.headers = updatedHeaders(e.headers, withMemberDate(fresh, times.memberDate));
  e.requestTime = requestTime;
  e.responseTime = responseTime;
  // The 304's own Date (not the stored one): the age now counts from this exchange.
  e.dateValue = parseHttpDate(h.get("date"));
  e.ageValue = parseAge(h.get("age"));
  const targeted = parseTargeted(e.header(rules.config.targeted_field));
  const cc = targeted ?? parseCacheControl(e.header("cache-control"));
  const base = expiresBase(h, times.memberDate, responseTime);
  const lifetime = freshnessLifetime(cc, targeted === null ? e.header("expires") : null, base);
  if (lifetime >= 0) e.lifetime = lifetime;
  e.noCache = cc.noCache;
  e.mustRevalidate = cc.mustRevalidate || cc.proxyRevalidate;
  e.immutable = cc.immutable;
  e.staleWhileRevalidate = Math.min(Math.max(0, cc.staleWhileRevalidate), rules.swrCap);
  e.staleIfError = Math.min(Math.max(0, cc.staleIfError), rules.sieCap);
  e.etag = e.header("etag");
  e.lastModified = e.header("last-modified");
}
