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
  type CacheControl,
  type CacheCounters,
  cacheKey,
  clientRevalidates,
  COLLAPSED,
  currentAge,
  type Entry,
  type Forward,
  ForwardHeaders,
  forwardStatus,
  HIT,
  hitStatus,
  inStaleWindow,
  invalidates,
  keyHost,
  MISS,
  NO_CACHE_CONTROL,
  ownBody,
  parseCacheControl,
  parseTargeted,
  RESULTS,
  REVALIDATED,
  sameHostTarget,
  selects,
  STALE,
  validators,
  varyMatches,
} from "../cache/mod.ts";
import type { CacheConfig } from "../config/mod.ts";
import type { Answer } from "../front/mod.ts";
import { AccessLog, createMetrics, log, Registry } from "../observe/mod.ts";
import {
  AppStats,
  Exchange,
  type Handler,
  normalizePath,
  type RequestFields,
} from "../pipeline/mod.ts";
import { admission, makeEntry, refreshEntry, type StoreRules } from "./cache_admission.ts";
import {
  discard,
  EMPTY,
  fieldsOf,
  join,
  readCapped,
  setField,
  streamOf,
  withBody,
} from "./cache_answers.ts";
import { Fill, Rest } from "./cache_fill.ts";
import { hitAnswer } from "./cache_hit.ts";
import { RouteFields } from "./cache_route.ts";

/** Request field lookup (what variant selection reads). */
interface HeaderGet {
  get(name: string): string | null;
}

/** A request's `Pragma: no-cache` without `Cache-Control` (RFC 9111 5.4). */
const PRAGMA_NO_CACHE = parseCacheControl("no-cache");

/** `Pragma` lists `no-cache` (any case, among other directives). */
function pragmaNoCache(v: string | null): boolean {
  if (v === null) return false;
  for (const d of v.split(",")) if (d.trim().toLowerCase() === "no-cache") return true;
  return false;
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
  /**
   * The route's `response_timeout` (default 60 s): a fill another process of the host holds
   * longer than this is taken over (its holder crashed or hangs).
   */
  readonly fillTimeout?: number;
  /**
   * The route's tag when the application's routes share URLs (`cache_route.ts`): its entries
   * are selected only by its own requests. Absent: entries are the URL's, whatever the route.
   */
  readonly route?: string;
}

/** Access log values of a result served from an entry read from the disk tier. */
const DISK_RESULTS = RESULTS.map((r) => `${r}-disk`);

/** The entry under `key` whose Vary and `key_headers` selection matches `h`, newest first. */
function select(variants: readonly Entry[] | undefined, h: HeaderGet): Entry | null {
  if (variants === undefined) return null;
  for (let i = variants.length - 1; i >= 0; i--) {
    const e = variants[i];
    if (e.selectNames.length === 0 || varyMatches(e.selectNames, e.selectValues, h)) return e;
  }
  return null;
}

/**
 * Whether a request that waited since `since` for another's fill or revalidation may be
 * answered with `e` (`age` seconds old): an entry stored or validated while it waited is served
 * even when it is `no-cache` (it was just checked); an older one only while fresh and within
 * the request's own limits (`min-fresh`, `max-age`, `no-cache`: RFC 9111 5.2.1), as a lookup
 * would.
 */
function collapsible(e: Entry, age: number, since: number, rcc: CacheControl): boolean {
  if (e.responseTime >= since) return true;
  const ttl = e.lifetime - age;
  return ttl > 0 && !e.noCache && !clientRevalidates(rcc, age, ttl, e.immutable);
}

let discardStats: AppStats | undefined;
const NOT_CACHED = "Gateway Timeout: not cached\n";
const OFF = new AccessLog("off");

/**
 * An exchange for a background refresh: no client, not counted, not logged. It is made while the
 * client's request is served, so the session still describes that request.
 */
function backgroundExchange(ex: Exchange, headers: ForwardHeaders): Exchange {
  discardStats ??= new AppStats("-", "-", createMetrics(new Registry()));
  const bg = new Exchange({
    session: ex.session,
    path: ex.path,
    query: ex.query,
    authority: ex.authority,
    peerTrusted: ex.peerTrusted,
    client: ex.client,
    stats: discardStats,
    start: performance.now(),
    log: OFF,
    bodyTimeout: ex.bodyTimeout,
    span: null,
  });
  bg.forwardWith(headers);
  bg.noInterim();
  // Read by the cache alone, never written to a client: a `Response` on either front.
  bg.answerAsResponse();
  return bg;
}

/** Wraps a route's handler with the response cache (see the module comment). */
export class CachedHandler implements Handler {
  private readonly inner: Handler;
  private readonly cache: Cache;
  private readonly cfg: CacheConfig;
  private readonly counters: CacheCounters;
  private readonly websocket: boolean;
  private readonly rules: StoreRules;
  private readonly fillTimeout: number;
  private readonly route: string | null;

  constructor(o: CachedOptions) {
    this.fillTimeout = o.fillTimeout ?? 60_000;
    this.route = o.route ?? null;
    this.inner = o.inner;
    this.cache = o.cache;
    this.cfg = o.config;
    this.counters = o.counters;
    this.websocket = o.websocket ?? false;
    this.rules = {
      config: o.config,
      swrCap: Math.floor(o.config.stale_while_revalidate / 1000),
      sieCap: Math.floor(o.config.stale_if_error / 1000),
      owner: o.owner,
      route: this.route,
      get heuristicMax() {
        return o.cache.heuristicMax;
      },
    };
  }

  /**
   * The wrapped handler's answer, in the form of the front that serves the request (`ex.answer`:
   * a `FrontAnswer` on scalwsd's own front, else a `Response`); the cache reads and stores either.
   */
  private innerHandle(ex: Exchange): Answer | Promise<Answer> {
    ex.holdAffinityCookies();
    return this.inner.handle(ex);
  }

  /** The answer leaves the cache: the affinity cookie the proxy held goes on it (not stored). */
  private deliver(ex: Exchange, a: Answer): Answer {
    const cookie = ex.takeAffinityCookie();
    if (cookie === null) return a;
    if (a instanceof Response) a.headers.append("set-cookie", cookie);
    else a.headers.push(["set-cookie", cookie]);
    return a;
  }

  close(): void {
    this.inner.close?.();
  }

  /**
   * The client's URL (before any `rewrite`: two routes rewriting to one member path keep apart,
   * and a purge names what clients ask for).
   */
  private key(ex: Exchange): string {
    return cacheKey(
      ex.secure,
      keyHost(ex.authority, ex.secure),
      ex.clientPath,
      this.cfg.ignore_query ? "" : ex.clientQuery,
    );
  }

  /** The request fields that select a variant: with the route's tag when it has one. */
  private fields(ex: Exchange): HeaderGet {
    return this.route === null ? ex.req.headers : new RouteFields(ex.req.headers, this.route);
  }

  handle(ex: Exchange): Answer | Promise<Answer> {
    const a = this.lookup(ex);
    // Answers from the store are synchronous and carry no cookie; the wrapped handler's are not.
    return a instanceof Promise ? a.then((r) => this.deliver(ex, r)) : this.deliver(ex, a);
  }

  private lookup(ex: Exchange): Answer | Promise<Answer> {
    const method = ex.req.method;
    const h = ex.req.headers;
    if ((method !== "GET" && method !== "HEAD") || (this.websocket && h.get("upgrade") !== null)) {
      return this.bypass(ex, method);
    }
    const key = this.key(ex);
    const sel = this.fields(ex);
    const ccv = h.get("cache-control");
    const rcc = ccv !== null
      ? parseCacheControl(ccv)
      : pragmaNoCache(h.get("pragma"))
      ? PRAGMA_NO_CACHE
      : NO_CACHE_CONTROL;
    const variants = this.cache.store.variants(key);
    let e = select(variants, sel);
    let disk = false;
    const tier = this.cache.disk;
    if (tier !== null && e !== null && e.onDisk && !tier.holds(key, sel, e, Date.now())) {
      // Purged, invalidated or replaced by another process of the host since it was stored.
      this.cache.store.remove(e);
      e = null;
    }
    if (tier !== null && (e === null || currentAge(e, this.cache.clock.now()) >= e.lifetime)) {
      // Not in memory, or stale there: the disk may hold what another process stored since.
      const d = tier.read(key, sel);
      if (d !== null) {
        if (e === null || d.responseTime > e.responseTime) {
          e = this.promote(key, d);
          disk = true;
        } else tier.release(d);
      }
    }
    if (e !== null) {
      const age = currentAge(e, this.cache.clock.now());
      const ttl = e.lifetime - age;
      const checked = clientRevalidates(rcc, age, ttl, e.immutable);
      if (ttl > 0 && !e.noCache && !checked) {
        return this.serve(ex, e, age, hitStatus(ttl), HIT, disk);
      }
      if (ttl <= 0 && !e.noCache && !e.mustRevalidate && !checked) {
        if (rcc.maxStale >= -ttl) return this.serve(ex, e, age, hitStatus(ttl), STALE, disk);
        if (inStaleWindow(-ttl, e.staleWhileRevalidate)) {
          this.refresh(ex, key, e.lent === null ? e : ownBody(e));
          return this.serve(ex, e, age, hitStatus(ttl), STALE, disk);
        }
      }
      // Kept past an await from here: a body read from disk is copied out of its lent buffer.
      e = this.own(e);
      if (rcc.onlyIfCached) return this.notCached(ex);
      return this.revalidate(ex, key, e, ttl > 0 || e.noCache ? "request" : "stale", rcc);
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
    ex.answered(504, NOT_CACHED.length);
    return new Response(NOT_CACHED, {
      status: 504,
      headers: {
        "content-type": "text/plain; charset=utf-8",
        "cache-status": forwardStatus({ fwd: "miss" }),
      },
    });
  }

  private count(ex: Exchange, result: number, disk = false): void {
    this.counters.count(result);
    ex.cacheVerdict(disk ? DISK_RESULTS[result] : RESULTS[result]);
  }

  /**
   * Answers from entry `e` (see `hitAnswer`), counted as `result`; `disk`: `e` was read from the
   * disk tier for this request.
   */
  private serve(
    ex: Exchange,
    e: Entry,
    age: number,
    status: string,
    result: number,
    disk = false,
  ): Answer {
    this.cache.store.touch(e);
    this.count(ex, result, disk);
    // A member's answer from the store is still a member's (`error_pages` without `intercept`
    // leaves it alone, as it did when it came from the member).
    if (!e.own && !ex.fromMember) ex.memberAnswered(null);
    if (result !== REVALIDATED) (disk ? this.cache.hitsDisk : this.cache.hitsMemory).value++;
    const tier = this.cache.disk;
    if (e.lent === null || tier === null) return hitAnswer(ex, e, age, status);
    // A body read from disk into a lent buffer: given back once written (a Response has
    // copied it already).
    const a = hitAnswer(ex, e, age, status, () => tier.release(e));
    if (a instanceof Response) tier.release(e);
    return a;
  }

  /**
   * An entry read from disk, put in memory (with a body of its own) when it may fit there;
   * else the entry as read (its body lent: see `serve`).
   */
  private promote(key: string, d: Entry): Entry {
    const store = this.cache.store;
    if (d.body.length >= store.maxBytes) return d;
    const m = ownBody(d);
    this.cache.disk?.release(d);
    store.put(key, m);
    return m;
  }

  /** `e` with a body of its own (one read from disk is copied out of its lent buffer). */
  private own(e: Entry): Entry {
    if (e.lent === null) return e;
    const o = ownBody(e);
    this.cache.disk?.release(e);
    return o;
  }

  /** Stores `e` under `key` in memory and, when there is one, on disk. */
  private keep(key: string, e: Entry): void {
    this.cache.store.put(key, e);
    void this.cache.disk?.write(key, e);
  }

  /** A 304 changed `e`'s head: recharged in memory, rewritten on disk. */
  private refreshed(key: string, e: Entry): void {
    this.cache.store.resize(e);
    if (e.onDisk) void this.cache.disk?.write(key, e);
  }

  /** `e` is still stored (in memory, or on disk when memory had no room for it). */
  private stored(e: Entry): boolean {
    return this.cache.store.has(e) || (e.onDisk && this.cache.disk !== null);
  }

  /** The leader for `key` is done: local waiters wake, the host's fill lock goes. */
  private done(key: string): void {
    this.cache.collapser.done(key);
    this.cache.disk?.releaseFill(key);
  }

  /** Not looked up: other methods (unsafe ones invalidate on success) and upgrades. */
  private bypass(ex: Exchange, method: string): Answer | Promise<Answer> {
    this.count(ex, BYPASS);
    const r = this.innerHandle(ex);
    if (r instanceof Promise) return r.then((res) => this.bypassed(ex, method, res));
    return this.bypassed(ex, method, r);
  }

  private bypassed(ex: Exchange, method: string, res: Answer): Answer | Promise<Answer> {
    if (res.status === 101) return res;
    setField(res, "cache-status", forwardStatus({ fwd: "bypass", status: res.status }));
    if (!invalidates(method, res.status)) return res;
    const removed = this.invalidate(ex, fieldsOf(res));
    // The files go before the answer: the client's next request may reach another instance.
    return removed.length === 0 ? res : Promise.all(removed).then(() => res, () => res);
  }

  /**
   * Removes the stored entries of the request's URL and of its Location / Content-Location;
   * the removals of their files in the disk tier, if any.
   */
  private invalidate(ex: Exchange, headers: RequestFields): Promise<number>[] {
    const store = this.cache.store;
    const disk = this.cache.disk;
    const removed: Promise<number>[] = [];
    const host = keyHost(ex.authority, ex.secure);
    const own = this.key(ex);
    store.removeKey(own);
    if (disk !== null) removed.push(disk.removeKey(own));
    const base = (ex.secure ? "https://" : "http://") + host + ex.path + ex.query;
    for (const name of ["location", "content-location"]) {
      const v = headers.get(name);
      if (v === null) continue;
      const target = sameHostTarget(v, base);
      if (target === null) continue;
      const q = target.indexOf("?");
      const path = normalizePath(q < 0 ? target : target.slice(0, q));
      const query = this.cfg.ignore_query || q < 0 ? "" : target.slice(q);
      const k = cacheKey(ex.secure, host, path, query);
      store.removeKey(k);
      if (disk !== null) removed.push(disk.removeKey(k));
    }
    return removed;
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
      const collapsed = await this.collapse(ex, key, fwd, rcc);
      if (collapsed !== null) return collapsed;
      lead = collapser.lead(key);
    }
    if (lead && this.cache.disk !== null) {
      const filled = await this.hostFill(ex, key, fwd, rcc);
      if (filled !== null) {
        this.done(key);
        return filled;
      }
    }
    const requestTime = this.cache.clock.now();
    let res: Answer;
    try {
      res = await this.innerHandle(ex);
    } catch (err) {
      if (lead) this.done(key);
      throw err;
    }
    return this.admit(ex, key, res, requestTime, fwd, lead, rcc);
  }

  /**
   * One member request per key per host: takes the fill lock of `key` in the disk tier's
   * directory, or waits for the process that holds it (at most `fillTimeout`, then takes it
   * over) and answers from what it stored. Null: this request goes to the member.
   */
  private async hostFill(
    ex: Exchange,
    key: string,
    fwd: Forward,
    rcc: CacheControl,
  ): Promise<Answer | null> {
    const disk = this.cache.disk!;
    const clock = this.cache.clock;
    const since = clock.now();
    // Bounded: a holder that keeps renewing (a takeover, then another) is waited for twice.
    const end = Date.now() + 2 * this.fillTimeout;
    let lock = disk.lockFill(key, this.fillTimeout);
    while (lock === null) {
      await disk.waitFill(key, this.fillTimeout, end - Date.now());
      let e = disk.read(key, this.fields(ex));
      if (e !== null) {
        const age = currentAge(e, clock.now());
        if (collapsible(e, age, since, rcc)) {
          e = this.promote(key, e);
          const status = forwardStatus({ fwd, status: e.status, collapsed: true });
          return this.serve(ex, e, age, status, COLLAPSED, true);
        }
        disk.release(e);
      }
      if (Date.now() >= end) return null;
      lock = disk.lockFill(key, this.fillTimeout);
    }
    if (lock !== null && lock !== "unlocked") disk.holdFill(key, lock);
    return null;
  }

  /**
   * Waits for the request already at the member for `key`, then answers from what it stored
   * or revalidated: an entry stored or validated while this request waited is served even
   * when it is `no-cache` (it was just checked); another entry only while fresh. Null: go to
   * the member.
   */
  private async collapse(
    ex: Exchange,
    key: string,
    fwd: Forward,
    rcc: CacheControl,
  ): Promise<Answer | null> {
    const clock = this.cache.clock;
    const since = clock.now();
    await this.cache.collapser.wait(key, this.cache.collapseWait);
    const e = select(this.cache.store.variants(key), this.fields(ex));
    if (e === null) return null;
    const age = currentAge(e, clock.now());
    if (!collapsible(e, age, since, rcc)) return null;
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
  private async revalidate(
    ex: Exchange,
    key: string,
    e: Entry,
    fwd: Forward,
    rcc: CacheControl,
  ): Promise<Answer> {
    const collapser = this.cache.collapser;
    const store = this.cache.store;
    const clock = this.cache.clock;
    let lead = collapser.lead(key);
    if (!lead) {
      const collapsed = await this.collapse(ex, key, fwd, rcc);
      if (collapsed !== null) return collapsed;
      lead = collapser.lead(key);
    }
    if (lead && this.cache.disk !== null) {
      // One revalidation per key per host, as fills: the fill lock, or the answer another
      // process revalidated (or fetched) meanwhile.
      const filled = await this.hostFill(ex, key, fwd, rcc);
      if (filled !== null) {
        this.done(key);
        return filled;
      }
    }
    const requestTime = clock.now();
    let res: Answer;
    try {
      ex.forwardWith(new ForwardHeaders(ex.editedHeaders ?? ex.req.headers, validators(e)));
      res = await this.innerHandle(ex);
      ex.forwardWith(null);
      if (res.status === 304) {
        discard(ex, res);
        const fields = fieldsOf(res);
        if (selects(e, fields.get("etag")) && this.stored(e)) {
          refreshEntry(this.rules, e, fields, {
            requestTime,
            responseTime: clock.now(),
            memberDate: ex.memberDate,
          });
          this.refreshed(key, e);
          if (lead) this.done(key);
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
        ex.forwardWith(new ForwardHeaders(ex.editedHeaders ?? ex.req.headers, []));
        res = await this.innerHandle(ex);
        ex.forwardWith(null);
      }
    } catch (err) {
      ex.forwardWith(null);
      if (lead) this.done(key);
      throw err;
    }
    if (res.status >= 500 && this.stored(e)) {
      const age = currentAge(e, clock.now());
      const stale = age - e.lifetime;
      if (!e.mustRevalidate && !e.noCache) {
        let detail: string | null = null;
        if (inStaleWindow(stale, e.staleIfError)) detail = "stale-if-error";
        else if (!ex.fromMember && this.disconnected(e, stale)) detail = "disconnected";
        if (detail !== null) {
          discard(ex, res);
          if (lead) this.done(key);
          return this.serve(ex, e, age, hitStatus(e.lifetime - age, detail), STALE);
        }
      }
    }
    return this.admit(ex, key, res, requestTime, fwd, lead, NO_CACHE_CONTROL);
  }

  /**
   * `stale_if_disconnected`: the member could not be reached (scalwsd made the 5xx itself) and
   * `e` is stale by at most the route's cap; `s-maxage` counts as `proxy-revalidate` here
   * (RFC 9111 5.2.2.10).
   */
  private disconnected(e: Entry, stale: number): boolean {
    if (!inStaleWindow(stale, this.cfg.stale_if_disconnected / 1000)) return false;
    const cc = parseTargeted(e.header(this.cfg.targeted_field)) ??
      parseCacheControl(e.header("cache-control"));
    return cc.sMaxage < 0 && !cc.proxyRevalidate;
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
      this.done(key);
    });
  }

  private async refreshIn(bg: Exchange, key: string, e: Entry): Promise<void> {
    const clock = this.cache.clock;
    const requestTime = clock.now();
    const res = await this.innerHandle(bg);
    const responseTime = clock.now();
    if (res.status === 304) {
      discard(bg, res);
      const fields = fieldsOf(res);
      if (selects(e, fields.get("etag")) && this.stored(e)) {
        refreshEntry(this.rules, e, fields, {
          requestTime,
          responseTime,
          memberDate: bg.memberDate,
        });
        this.refreshed(key, e);
      }
      return;
    }
    const a = admission(this.rules, bg, res, { requestTime, responseTime }, NO_CACHE_CONTROL);
    if (a === null || bg.surplus) {
      discard(bg, res);
      return;
    }
    const body = await readCapped(res, this.cfg.max_object_size);
    if (body === null || bg.surplus) return;
    const cl = a.headers.get("content-length");
    if (cl !== null && bg.deferred && Number(cl) !== body.length) return;
    this.keep(key, makeEntry(this.rules, bg, a, body));
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
    const a = res.status === 101 || ex.surplus
      ? null
      : admission(this.rules, ex, res, { requestTime, responseTime: this.cache.clock.now() }, rcc);
    this.count(ex, MISS);
    if (a === null) {
      if (lead) this.done(key);
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
        this.keep(key, makeEntry(this.rules, ex, a, body === null ? EMPTY : body.slice()));
      }
      if (lead) this.done(key);
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
          if (lead) this.done(key);
          throw err;
        }
        if (r.done) break;
        chunks.push(r.value);
        size += r.value.length;
        if (size > this.cfg.max_object_size) {
          // Not whole after all, and too large: the rest streams through unstored.
          if (lead) this.done(key);
          setField(res, "cache-status", forwardStatus({ fwd, status: res.status }));
          return withBody(
            res,
            new ReadableStream(new Rest(chunks, reader), { highWaterMark: 0 }),
          );
        }
      }
      const whole = join(chunks, size);
      if (!ex.surplus) this.keep(key, makeEntry(this.rules, ex, a, whole));
      if (lead) this.done(key);
      return withBody(res, whole.length === 0 ? null : whole);
    }
    const cl = a.headers.get("content-length");
    const fill = new Fill({
      onEnd: (f, ok) => this.filled(f, ok),
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

  /** A streamed answer ended: stored if it ended whole. */
  private filled(f: Fill, ok: boolean): void {
    if (ok && f.keep && !f.ex.surplus && (f.expected < 0 || f.size === f.expected)) {
      this.keep(f.key, makeEntry(this.rules, f.ex, f.admission, join(f.chunks, f.size)));
    }
    f.chunks = [];
    if (f.lead) this.done(f.key);
  }
}
