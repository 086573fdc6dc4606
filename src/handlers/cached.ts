/**
 * The response cache in the request path: a handler that wraps a route's handler (proxy, PHP,
 * anything) when the route has `cache:`. It sits in one place whichever front served the
 * request: after routing, before the route's handler. Hits never reach the member; misses
 * reach it once per key (collapsed) and are stored while they stream to the client; stale
 * entries are revalidated, served during `stale-while-revalidate` while one background
 * request refreshes them, or served when the member fails within `stale-if-error`.
 */
import {
  BYPASS,
  type Cache,
  type CacheCounters,
  COLLAPSED,
  HIT,
  MISS,
  RESULTS,
  REVALIDATED,
  STALE,
} from "../cache/cache.ts";
import { type CacheControl, NO_CACHE_CONTROL, parseCacheControl } from "../cache/cache_control.ts";
import { cacheKey, keyHost } from "../cache/cache_key.ts";
import { type Forward, forwardStatus, hitStatus } from "../cache/cache_status.ts";
import { NOT_MODIFIED_HEADERS, notModified } from "../cache/conditional.ts";
import { type Bytes, Entry } from "../cache/entry.ts";
import { ForwardHeaders } from "../cache/forward_headers.ts";
import { currentAge, freshnessLifetime, parseAge } from "../cache/freshness.ts";
import { parseHttpDate } from "../cache/http_date.ts";
import { invalidates, sameHostTarget, UNSAFE } from "../cache/invalidation.ts";
import { parseRange } from "../cache/range.ts";
import { selects, updatedHeaders, validators } from "../cache/revalidation.ts";
import { storability, UNKEYED_REFLECTED } from "../cache/storable.ts";
import { varyMatches, varyValues } from "../cache/vary.ts";
import type { CacheConfig } from "../config/types.ts";
import { type Answer, FrontAnswer, type PullBody, pullStream } from "../front/answer.ts";
import { AccessLog } from "../observe/access_log.ts";
import { createMetrics } from "../observe/families.ts";
import { log } from "../observe/log.ts";
import { Registry } from "../observe/metrics.ts";
import { AppStats, Exchange, type Handler, type RequestFields } from "../pipeline/exchange.ts";
import { normalizePath } from "../pipeline/path.ts";

/** Response fields never stored (hop-by-hop, per-response, or written by Deno.serve). */
const NOT_STORED = new Set([
  "age",
  "set-cookie",
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "content-length",
  "cache-status",
]);

const EMPTY: Bytes = new Uint8Array(0);

/** A request's `Pragma: no-cache` without `Cache-Control` (RFC 9111 5.4). */
const PRAGMA_NO_CACHE = parseCacheControl("no-cache");

/** `Pragma` lists `no-cache` (any case, among other directives). */
function pragmaNoCache(v: string | null): boolean {
  if (v === null) return false;
  for (const d of v.split(",")) if (d.trim().toLowerCase() === "no-cache") return true;
  return false;
}

/** The header pairs of a `FrontAnswer` read like `Headers` (lower-case names). */
class PairFields implements RequestFields {
  constructor(private readonly pairs: readonly [string, string][]) {}

  get(name: string): string | null {
    let v: string | null = null;
    for (const p of this.pairs) {
      if (p[0] === name) v = v === null ? p[1] : v + ", " + p[1];
    }
    return v;
  }

  has(name: string): boolean {
    return this.get(name) !== null;
  }

  forEach(fn: (value: string, name: string) => void): void {
    for (const p of this.pairs) fn(p[1], p[0]);
  }
}

/** The header fields of an answer, whichever kind. */
function fieldsOf(a: Answer): RequestFields {
  return a instanceof Response ? a.headers : new PairFields(a.headers);
}

/** Sets `name` (lower-case) on an answer, replacing what it had. */
function setField(a: Answer, name: string, value: string): void {
  if (a instanceof Response) {
    a.headers.set(name, value);
    return;
  }
  const h = a.headers;
  for (let i = h.length - 1; i >= 0; i--) if (h[i][0] === name) h.splice(i, 1);
  h.push([name, value]);
}

/** A streamed body as a stream (a member's body pulled from its connection is made one). */
function streamOf(body: ReadableStream<Uint8Array> | PullBody): ReadableStream<Uint8Array> {
  return body instanceof ReadableStream ? body : pullStream(body);
}

/** An answer like `a` (same kind, status and header fields) with another body. */
function withBody(a: Answer, body: ReadableStream<Uint8Array> | Bytes | null): Answer {
  if (a instanceof Response) return new Response(body, { status: a.status, headers: a.headers });
  return new FrontAnswer(a.status, a.headers, body, a.onWritten);
}

/** What a wrapped route needs. */
export interface CachedOptions {
  readonly inner: Handler;
  readonly cache: Cache;
  readonly config: CacheConfig;
  readonly counters: CacheCounters;
  /** `tenant/app`: entries are tagged with it so a reload can drop them. */
  readonly owner: string;
  /** The route passes WebSocket upgrades on: those bypass the cache. Default false. */
  readonly websocket?: boolean;
}

/** The entry under `key` whose Vary and `key_headers` selection matches `h`, newest first. */
function select(variants: readonly Entry[] | undefined, h: RequestFields): Entry | null {
  if (variants === undefined) return null;
  for (let i = variants.length - 1; i >= 0; i--) {
    const e = variants[i];
    if (e.selectNames.length === 0 || varyMatches(e.selectNames, e.selectValues, h)) return e;
  }
  return null;
}

/** The member's Date (when it was kept) in ms, else `received`. */
function dateOr(h: RequestFields, received: number): number {
  const d = parseHttpDate(h.get("date"));
  return Number.isNaN(d) ? received : d;
}

/** A body nobody will read: released without counting against the member. */
function discard(ex: Exchange, res: Answer): void {
  // The attempt would complete the exchange when its body ends; the cache answers instead.
  ex.deferred = false;
  const body = res.body;
  if (body instanceof ReadableStream) body.cancel().catch(() => {});
  else if (body !== null && !(body instanceof Uint8Array)) body.cancel();
  if (res instanceof FrontAnswer) res.onWritten?.(false);
}

/** The whole body when it is at most `max` bytes; null when larger or broken. */
async function readCapped(res: Answer, max: number): Promise<Bytes | null> {
  const body = res.body;
  if (body === null) return EMPTY;
  if (body instanceof Uint8Array) return body.length > max ? null : body.slice() as Bytes;
  const reader = streamOf(body).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      size += r.value.length;
      if (size > max) {
        await reader.cancel();
        return null;
      }
      chunks.push(r.value);
    }
  } catch {
    return null;
  }
  return join(chunks, size);
}

function join(chunks: readonly Uint8Array[], size: number): Bytes {
  if (chunks.length === 1 && chunks[0].byteOffset === 0) {
    return chunks[0].slice() as Bytes;
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

let discardStats: AppStats | undefined;
const OFF = new AccessLog("off");

/** An exchange for a background refresh: no client, not counted, not logged. */
function backgroundExchange(ex: Exchange, headers: ForwardHeaders): Exchange {
  discardStats ??= new AppStats("-", "-", createMetrics(new Registry()));
  const bg = new Exchange({
    req: ex.req,
    path: ex.path,
    query: ex.query,
    authority: ex.authority,
    peer: ex.peer,
    peerTrusted: ex.peerTrusted,
    client: ex.client,
    secure: ex.secure,
    stats: discardStats,
    start: performance.now(),
    log: OFF,
  });
  bg.forwardHeaders = headers;
  bg.bodyTimeout = ex.bodyTimeout;
  return bg;
}

/** Facts of an answer being considered for storing. */
interface Admission {
  readonly status: number;
  readonly headers: RequestFields;
  readonly cc: CacheControl;
  readonly lifetime: number;
  readonly vary: readonly string[];
  readonly requestTime: number;
  readonly responseTime: number;
}

/** Wraps a route's handler with the response cache (see the module comment). */
export class CachedHandler implements Handler {
  private readonly inner: Handler;
  private readonly cache: Cache;
  private readonly cfg: CacheConfig;
  private readonly counters: CacheCounters;
  private readonly owner: string;
  private readonly websocket: boolean;
  /** Caps in seconds. */
  private readonly swrCap: number;
  private readonly sieCap: number;

  constructor(o: CachedOptions) {
    this.inner = o.inner;
    this.cache = o.cache;
    this.cfg = o.config;
    this.counters = o.counters;
    this.owner = o.owner;
    this.websocket = o.websocket ?? false;
    this.swrCap = Math.floor(o.config.stale_while_revalidate / 1000);
    this.sieCap = Math.floor(o.config.stale_if_error / 1000);
  }

  /**
   * The wrapped handler's answer: a `FrontAnswer` on scalwsd's own front (`ex.rawAnswer`),
   * else a `Response`; the cache reads and stores either.
   */
  private innerHandle(ex: Exchange): Answer | Promise<Answer> {
    return this.inner.handle(ex);
  }

  close(): void {
    this.inner.close?.();
  }

  private key(ex: Exchange): string {
    return cacheKey(
      ex.secure,
      keyHost(ex.authority, ex.secure),
      ex.path,
      this.cfg.ignore_query ? "" : ex.query,
    );
  }

  handle(ex: Exchange): Answer | Promise<Answer> {
    const method = ex.req.method;
    const h = ex.req.headers;
    if ((method !== "GET" && method !== "HEAD") || (this.websocket && h.get("upgrade") !== null)) {
      return this.bypass(ex, method);
    }
    const key = this.key(ex);
    const ccv = h.get("cache-control");
    const rcc = ccv !== null
      ? parseCacheControl(ccv)
      : pragmaNoCache(h.get("pragma"))
      ? PRAGMA_NO_CACHE
      : NO_CACHE_CONTROL;
    const variants = this.cache.store.variants(key);
    const e = select(variants, h);
    if (e !== null) {
      const age = currentAge(e, this.cache.clock.now());
      const ttl = e.lifetime - age;
      // Ages are whole seconds: a stored answer is always older than `max-age=0`.
      const clientRevalidates = rcc.noCache ||
        (rcc.maxAge >= 0 && (age > rcc.maxAge || rcc.maxAge === 0)) ||
        (rcc.minFresh >= 0 && ttl < rcc.minFresh);
      if (ttl > 0 && !e.noCache && !clientRevalidates) {
        return this.serve(ex, e, age, hitStatus(ttl), HIT);
      }
      if (ttl <= 0 && !e.noCache && !e.mustRevalidate && !clientRevalidates) {
        if (rcc.maxStale >= -ttl) return this.serve(ex, e, age, hitStatus(ttl), STALE);
        if (-ttl <= e.staleWhileRevalidate) {
          this.refresh(ex, key, e);
          return this.serve(ex, e, age, hitStatus(ttl), STALE);
        }
      }
      if (rcc.onlyIfCached) return this.notCached(ex);
      return this.revalidate(ex, key, e, ttl > 0 || e.noCache ? "request" : "stale");
    }
    if (rcc.onlyIfCached) return this.notCached(ex);
    const fwd: Forward = variants === undefined ? "uri-miss" : "miss";
    // A range of an object not stored, or a HEAD: passed on, nothing stored.
    if (h.get("range") !== null) return this.pass(ex, fwd, BYPASS);
    if (method === "HEAD") return this.pass(ex, fwd, MISS);
    return this.miss(ex, key, fwd, rcc);
  }

  /** `only-if-cached` without a usable entry: 504 (RFC 9111 5.2.1.7). */
  private notCached(ex: Exchange): Response {
    this.count(ex, MISS);
    ex.status = 504;
    return new Response("Gateway Timeout: not cached\n", {
      status: 504,
      headers: {
        "content-type": "text/plain; charset=utf-8",
        "cache-status": forwardStatus({ fwd: "miss" }),
      },
    });
  }

  private count(ex: Exchange, result: number): void {
    this.counters.count(result);
    ex.cache = RESULTS[result];
  }

  /**
   * Answers from entry `e`: the client's own 304, a byte range, or the whole answer. On
   * scalwsd's own front, a `FrontAnswer` of the stored pairs and bytes; else a `Response`.
   */
  private serve(ex: Exchange, e: Entry, age: number, status: string, result: number): Answer {
    this.cache.store.touch(e);
    this.count(ex, result);
    const h = ex.req.headers;
    const inm = h.get("if-none-match");
    const ims = inm === null ? h.get("if-modified-since") : null;
    if (
      (inm !== null || ims !== null) && e.status === 200 &&
      notModified({ ifNoneMatch: inm, ifModifiedSince: ims }, e.etag, e.lastModified, e.dateValue)
    ) {
      const headers: [string, string][] = [];
      for (const f of e.headers) if (NOT_MODIFIED_HEADERS.has(f[0])) headers.push(f);
      headers.push(["age", String(age)], ["cache-status", status]);
      ex.status = 304;
      ex.bytes = 0;
      if (ex.rawAnswer) return new FrontAnswer(304, headers, null);
      return new Response(null, { status: 304, headers });
    }
    const method = ex.req.method;
    const range = e.status === 200 ? h.get("range") : null;
    if (range === null && method !== "HEAD" && ex.rawAnswer) {
      // The common hit on scalwsd's own front: the stored pairs and bytes, no Web objects.
      const n = e.headers.length;
      const hh = new Array<[string, string]>(n + 2);
      for (let i = 0; i < n; i++) hh[i] = e.headers[i];
      hh[n] = ["age", String(age)];
      hh[n + 1] = ["cache-status", status];
      ex.status = e.status;
      ex.bytes = e.body.length;
      return new FrontAnswer(e.status, hh, e.body.length === 0 ? null : e.body);
    }
    if (range === null && method !== "HEAD") {
      // The common hit: one reused header list, its last two values set for this answer.
      let hh = e.hitHeaders;
      if (hh === null) {
        hh = e.headers.slice();
        hh.push(["age", ""], ["cache-status", ""]);
        e.hitHeaders = hh;
      }
      hh[hh.length - 2][1] = String(age);
      hh[hh.length - 1][1] = status;
      ex.status = e.status;
      ex.bytes = e.body.length;
      return new Response(e.body.length === 0 ? null : e.body, { status: e.status, headers: hh });
    }
    const headers = e.headers.slice();
    headers.push(["age", String(age)], ["cache-status", status]);
    let body = e.body;
    let code = e.status;
    if (range !== null) {
      if (this.rangeApplies(h.get("if-range"), e)) {
        const br = parseRange(range, body.length);
        if (br === "unsatisfiable") {
          headers.push(["content-range", `bytes */${body.length}`]);
          body = EMPTY;
          code = 416;
        } else if (br !== null) {
          headers.push(["content-range", `bytes ${br.start}-${br.end}/${body.length}`]);
          body = body.subarray(br.start, br.end + 1);
          code = 206;
        }
      }
    }
    ex.status = code;
    if (method === "HEAD") {
      headers.push(["content-length", String(body.length)]);
      ex.bytes = 0;
      if (ex.rawAnswer) return new FrontAnswer(code, headers, null);
      return new Response(null, { status: code, headers });
    }
    ex.bytes = body.length;
    if (ex.rawAnswer) return new FrontAnswer(code, headers, body.length === 0 ? null : body);
    return new Response(body.length === 0 ? null : body, { status: code, headers });
  }

  /** `If-Range` (RFC 9110 13.1.5): a strong ETag or the exact Last-Modified date. */
  private rangeApplies(ifRange: string | null, e: Entry): boolean {
    if (ifRange === null) return true;
    const v = ifRange.trim();
    if (v.startsWith('"')) return e.etag !== null && !e.etag.startsWith("W/") && e.etag === v;
    if (v.startsWith("W/")) return false;
    return e.lastModified !== null && parseHttpDate(v) === parseHttpDate(e.lastModified);
  }

  /** Not looked up: other methods (unsafe ones invalidate on success) and upgrades. */
  private bypass(ex: Exchange, method: string): Answer | Promise<Answer> {
    this.count(ex, BYPASS);
    const r = this.innerHandle(ex);
    if (r instanceof Promise) return r.then((res) => this.bypassed(ex, method, res));
    return this.bypassed(ex, method, r);
  }

  private bypassed(ex: Exchange, method: string, res: Answer): Answer {
    if (res.status === 101) return res;
    if (UNSAFE.has(method) && invalidates(method, res.status)) {
      this.invalidate(ex, fieldsOf(res));
    }
    setField(res, "cache-status", forwardStatus({ fwd: "bypass", status: res.status }));
    return res;
  }

  /** Removes the stored entries of the request's URL and of its Location / Content-Location. */
  private invalidate(ex: Exchange, headers: RequestFields): void {
    const store = this.cache.store;
    const host = keyHost(ex.authority, ex.secure);
    store.removeKey(this.key(ex));
    const base = (ex.secure ? "https://" : "http://") + host + ex.path + ex.query;
    for (const name of ["location", "content-location"]) {
      const v = headers.get(name);
      if (v === null) continue;
      const target = sameHostTarget(v, base);
      if (target === null) continue;
      const q = target.indexOf("?");
      const path = normalizePath(q < 0 ? target : target.slice(0, q));
      const query = this.cfg.ignore_query || q < 0 ? "" : target.slice(q);
      store.removeKey(cacheKey(ex.secure, host, path, query));
    }
  }

  /** Forwarded without storing (a HEAD or Range miss). */
  private async pass(ex: Exchange, fwd: Forward, result: number): Promise<Answer> {
    this.count(ex, result);
    const res = await this.innerHandle(ex);
    if (res.status !== 101) {
      setField(res, "cache-status", forwardStatus({ fwd, status: res.status }));
    }
    return res;
  }

  /** A miss: one request per key goes to the member, the others wait for its answer. */
  private async miss(
    ex: Exchange,
    key: string,
    fwd: Forward,
    rcc: CacheControl,
  ): Promise<Answer> {
    const collapser = this.cache.collapser;
    let lead = collapser.lead(key);
    if (!lead) {
      const collapsed = await this.collapse(ex, key, fwd);
      if (collapsed !== null) return collapsed;
      lead = collapser.lead(key);
    }
    const requestTime = this.cache.clock.now();
    let res: Answer;
    try {
      res = await this.innerHandle(ex);
    } catch (err) {
      if (lead) collapser.done(key);
      throw err;
    }
    return this.admit(ex, key, res, requestTime, fwd, lead, rcc);
  }

  /**
   * Waits for the request already at the member for `key`, then answers from what it stored
   * or revalidated: an entry stored or validated while this request waited is served even
   * when it is `no-cache` (it was just checked); another entry only while fresh. Null: go to
   * the member.
   */
  private async collapse(ex: Exchange, key: string, fwd: Forward): Promise<Answer | null> {
    const clock = this.cache.clock;
    const since = clock.now();
    await this.cache.collapser.wait(key, this.cache.collapseWait);
    const e = select(this.cache.store.variants(key), ex.req.headers);
    if (e === null) return null;
    const age = currentAge(e, clock.now());
    if (e.responseTime < since && (e.lifetime - age <= 0 || e.noCache)) return null;
    return this.serve(
      ex,
      e,
      age,
      forwardStatus({ fwd, status: e.status, collapsed: true }),
      COLLAPSED,
    );
  }

  /**
   * A stale entry (or one the client or `no-cache` wants checked) is revalidated with the
   * member; a 304 refreshes it and the client gets it (or its own 304).
   */
  private async revalidate(ex: Exchange, key: string, e: Entry, fwd: Forward): Promise<Answer> {
    const collapser = this.cache.collapser;
    const store = this.cache.store;
    const clock = this.cache.clock;
    let lead = collapser.lead(key);
    if (!lead) {
      const collapsed = await this.collapse(ex, key, fwd);
      if (collapsed !== null) return collapsed;
      lead = collapser.lead(key);
    }
    const requestTime = clock.now();
    let res: Answer;
    try {
      ex.forwardHeaders = new ForwardHeaders(ex.editedHeaders ?? ex.req.headers, validators(e));
      res = await this.innerHandle(ex);
      ex.forwardHeaders = null;
      if (res.status === 304) {
        discard(ex, res);
        const fields = fieldsOf(res);
        if (selects(e, fields.get("etag")) && store.has(e)) {
          this.refreshed(e, fields, requestTime, clock.now());
          store.resize(e);
          if (lead) collapser.done(key);
          return this.serve(
            ex,
            e,
            currentAge(e, clock.now()),
            forwardStatus({ fwd, status: 304 }),
            REVALIDATED,
          );
        }
        // The 304 is about another representation: this one is gone; fetch it whole.
        store.remove(e);
        ex.forwardHeaders = new ForwardHeaders(ex.editedHeaders ?? ex.req.headers, []);
        res = await this.innerHandle(ex);
        ex.forwardHeaders = null;
      }
    } catch (err) {
      ex.forwardHeaders = null;
      if (lead) collapser.done(key);
      throw err;
    }
    if (res.status >= 500 && store.has(e)) {
      const age = currentAge(e, clock.now());
      if (!e.mustRevalidate && !e.noCache && age - e.lifetime <= e.staleIfError) {
        discard(ex, res);
        if (lead) collapser.done(key);
        return this.serve(ex, e, age, hitStatus(e.lifetime - age, "stale-if-error"), STALE);
      }
    }
    return this.admit(ex, key, res, requestTime, fwd, lead, NO_CACHE_CONTROL);
  }

  /** Applies a 304's header fields and times to `e` (RFC 9111 4.3.4). */
  private refreshed(e: Entry, h: RequestFields, requestTime: number, responseTime: number): void {
    const fresh: [string, string][] = [];
    h.forEach((v, k) => fresh.push([k, v]));
    e.headers = updatedHeaders(e.headers, fresh);
    e.hitHeaders = null;
    e.requestTime = requestTime;
    e.responseTime = responseTime;
    e.dateValue = parseHttpDate(e.header("date"));
    e.ageValue = parseAge(h.get("age"));
    const cc = parseCacheControl(e.header("cache-control"));
    const lifetime = freshnessLifetime(cc, e.header("expires"), dateOr(h, responseTime));
    if (lifetime >= 0) e.lifetime = lifetime;
    e.noCache = cc.noCache;
    e.mustRevalidate = cc.mustRevalidate || cc.proxyRevalidate;
    e.staleWhileRevalidate = Math.min(Math.max(0, cc.staleWhileRevalidate), this.swrCap);
    e.staleIfError = Math.min(Math.max(0, cc.staleIfError), this.sieCap);
    e.etag = e.header("etag");
    e.lastModified = e.header("last-modified");
  }

  /** Stale-while-revalidate: one background request refreshes `e`; the client is not kept. */
  private refresh(ex: Exchange, key: string, e: Entry): void {
    const collapser = this.cache.collapser;
    if (e.refreshing || !collapser.lead(key)) return;
    e.refreshing = true;
    const bg = backgroundExchange(
      ex,
      new ForwardHeaders(ex.editedHeaders ?? ex.req.headers, validators(e)),
    );
    this.refreshIn(bg, key, e).catch((err) => {
      log("warn", "cache_refresh_failed", { key, error: String(err) });
    }).finally(() => {
      e.refreshing = false;
      collapser.done(key);
    });
  }

  private async refreshIn(bg: Exchange, key: string, e: Entry): Promise<void> {
    const clock = this.cache.clock;
    const store = this.cache.store;
    const requestTime = clock.now();
    const res = await this.innerHandle(bg);
    const responseTime = clock.now();
    if (res.status === 304) {
      discard(bg, res);
      const fields = fieldsOf(res);
      if (selects(e, fields.get("etag")) && store.has(e)) {
        this.refreshed(e, fields, requestTime, responseTime);
        store.resize(e);
      }
      return;
    }
    const a = this.admission(bg, res, requestTime, responseTime, NO_CACHE_CONTROL);
    if (a === null || bg.surplus) {
      discard(bg, res);
      return;
    }
    const body = await readCapped(res, this.cfg.max_object_size);
    if (body === null || bg.surplus) return;
    const cl = a.headers.get("content-length");
    if (cl !== null && bg.deferred && Number(cl) !== body.length) return;
    store.put(key, this.entry(bg, a, body));
  }

  /** The storing decision for `res`; null when it must not be stored. */
  private admission(
    ex: Exchange,
    res: Answer,
    requestTime: number,
    responseTime: number,
    rcc: CacheControl,
  ): Admission | null {
    const rh = fieldsOf(res);
    const h = ex.req.headers;
    let reflected: string[] | null = null;
    for (const name of UNKEYED_REFLECTED) {
      if (h.get(name) !== null) (reflected ??= []).push(name);
    }
    const cc = parseCacheControl(rh.get("cache-control"));
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
        expires: rh.get("expires"),
        date: dateOr(rh, responseTime),
        vary: rh.get("vary"),
        setCookie: rh.get("set-cookie") !== null,
      },
      { storeSetCookie: this.cfg.store_set_cookie, keyHeaders: this.cfg.key_headers },
    );
    if (!d.ok) return null;
    const cl = rh.get("content-length");
    if (cl !== null && Number(cl) > this.cfg.max_object_size) return null;
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

  private entry(ex: Exchange, a: Admission, body: Bytes): Entry {
    const headers: [string, string][] = [];
    a.headers.forEach((v, k) => {
      if (!NOT_STORED.has(k)) headers.push([k, v]);
    });
    const names = [...a.vary];
    for (const k of this.cfg.key_headers) if (!names.includes(k)) names.push(k);
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
      staleWhileRevalidate: Math.min(Math.max(0, cc.staleWhileRevalidate), this.swrCap),
      staleIfError: Math.min(Math.max(0, cc.staleIfError), this.sieCap),
      noCache: cc.noCache,
      mustRevalidate: cc.mustRevalidate || cc.proxyRevalidate,
      etag: a.headers.get("etag"),
      lastModified: a.headers.get("last-modified"),
      selectNames: names,
      selectValues: varyValues(names, ex.req.headers),
      owner: this.owner,
    });
  }

  /**
   * The member's answer to a miss or revalidation: passed to the client, and stored when it
   * may be. A whole body is stored at once; a streamed one while it streams, and only when it
   * ends cleanly at its declared length. `lead`: the collapser is released at the end.
   */
  private async admit(
    ex: Exchange,
    key: string,
    res: Answer,
    requestTime: number,
    fwd: Forward,
    lead: boolean,
    rcc: CacheControl,
  ): Promise<Answer> {
    const collapser = this.cache.collapser;
    const a = res.status === 101 || ex.surplus
      ? null
      : this.admission(ex, res, requestTime, this.cache.clock.now(), rcc);
    this.count(ex, MISS);
    if (a === null) {
      if (lead) collapser.done(key);
      if (res.status !== 101) {
        setField(res, "cache-status", forwardStatus({ fwd, status: res.status }));
      }
      return res;
    }
    setField(
      res,
      "cache-status",
      forwardStatus({ fwd, status: res.status, stored: true, ttl: a.lifetime }),
    );
    const body = res.body;
    if (body === null || body instanceof Uint8Array) {
      // A whole body (a FrontAnswer's bytes may be a view of a reused buffer: stored copied).
      if (body !== null && body.length > this.cfg.max_object_size) {
        setField(res, "cache-status", forwardStatus({ fwd, status: res.status }));
      } else if (!ex.surplus) {
        this.cache.store.put(key, this.entry(ex, a, body === null ? EMPTY : body.slice()));
      }
      if (lead) collapser.done(key);
      return res;
    }
    const reader = streamOf(body).getReader();
    if (!(ex.deferred || ex.streaming)) {
      // A body the handler had whole (one chunk, normally): stored before it is answered.
      const chunks: Uint8Array[] = [];
      let size = 0;
      for (;;) {
        let r: ReadableStreamReadResult<Uint8Array>;
        try {
          r = await reader.read();
        } catch (err) {
          if (lead) collapser.done(key);
          throw err;
        }
        if (r.done) break;
        chunks.push(r.value);
        size += r.value.length;
        if (size > this.cfg.max_object_size) {
          // Not whole after all, and too large: the rest streams through unstored.
          if (lead) collapser.done(key);
          setField(res, "cache-status", forwardStatus({ fwd, status: res.status }));
          return withBody(
            res,
            new ReadableStream(new Rest(chunks, reader), { highWaterMark: 0 }),
          );
        }
      }
      const whole = join(chunks, size);
      if (!ex.surplus) this.cache.store.put(key, this.entry(ex, a, whole));
      if (lead) collapser.done(key);
      return withBody(res, whole.length === 0 ? null : whole);
    }
    const cl = a.headers.get("content-length");
    const fill = new Fill({
      handler: this,
      ex,
      key,
      admission: a,
      lead,
      reader,
      expected: cl === null ? -1 : Number(cl),
      max: this.cfg.max_object_size,
    });
    return withBody(res, new ReadableStream(fill, { highWaterMark: 0 }));
  }

  /** Called by `Fill` when a streamed answer ended: stores it if it ended whole. */
  filled(f: Fill, ok: boolean): void {
    if (ok && f.keep && !f.ex.surplus && (f.expected < 0 || f.size === f.expected)) {
      this.cache.store.put(f.key, this.entry(f.ex, f.admission, join(f.chunks, f.size)));
    }
    f.chunks = [];
    if (f.lead) this.cache.collapser.done(f.key);
  }
}

/** Chunks already read, then the rest of a body, passed on unstored. */
class Rest implements UnderlyingDefaultSource<Uint8Array> {
  constructor(
    private readonly chunks: Uint8Array[],
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
  ) {}

  async pull(c: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    const first = this.chunks.shift();
    if (first !== undefined) return c.enqueue(first);
    const r = await this.reader.read();
    if (r.done) c.close();
    else c.enqueue(r.value);
  }

  cancel(reason: unknown): Promise<void> {
    return this.reader.cancel(reason);
  }
}

/**
 * A streamed answer on its way to the client, copied aside for the store. A client that goes
 * away or a body that breaks drops the copy: an entry is stored whole or not at all.
 */
class Fill implements UnderlyingDefaultSource<Uint8Array> {
  chunks: Uint8Array[] = [];
  size = 0;
  /** False once the body is over `max_object_size`: it streams on unstored. */
  keep = true;
  private settled = false;

  readonly ex: Exchange;
  readonly key: string;
  readonly admission: Admission;
  readonly lead: boolean;
  readonly expected: number;
  private readonly handler: CachedHandler;
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly max: number;

  constructor(o: {
    handler: CachedHandler;
    ex: Exchange;
    key: string;
    admission: Admission;
    lead: boolean;
    reader: ReadableStreamDefaultReader<Uint8Array>;
    /** Content-Length, -1 when none. */
    expected: number;
    max: number;
  }) {
    this.handler = o.handler;
    this.ex = o.ex;
    this.key = o.key;
    this.admission = o.admission;
    this.lead = o.lead;
    this.reader = o.reader;
    this.expected = o.expected;
    this.max = o.max;
  }

  async pull(c: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    let r: ReadableStreamReadResult<Uint8Array>;
    try {
      r = await this.reader.read();
    } catch (err) {
      this.settle(false);
      c.error(err);
      return;
    }
    if (r.done) {
      this.settle(true);
      c.close();
      return;
    }
    const v = r.value;
    if (this.keep) {
      this.size += v.length;
      if (this.size > this.max) {
        this.keep = false;
        this.chunks = [];
      } else this.chunks.push(v.slice());
    }
    c.enqueue(v);
  }

  cancel(reason: unknown): Promise<void> {
    this.settle(false);
    return this.reader.cancel(reason);
  }

  private settle(ok: boolean): void {
    if (this.settled) return;
    this.settled = true;
    this.handler.filled(this, ok);
  }
}
