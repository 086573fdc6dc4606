/**
 * Builds one generation from a configuration (`buildGeneration`): hosts and routes, each route's
 * policies and handler (proxy, php, static, respond, cached), rate limiters and the pools from the
 * registry. Pure construction: nothing listens and nothing is swapped here (`server.ts` does
 * that).
 *
 * @module
 */

import type { CacheConfig, Config, RouteConfig, RuntimeConfig } from "../config/mod.ts";
import { type Cache, CacheCounters } from "../cache/mod.ts";
import {
  AddressProxyHandler,
  BackendsHandler,
  CachedHandler,
  PhpHandler,
  PoolProxyHandler,
  RespondHandler,
  routesShareUrls,
  routeTag,
  StaticHandler,
} from "../handlers/mod.ts";
import type { ConnPool } from "../http1/mod.ts";
import { appPoolName } from "../apps/mod.ts";
import type { Metrics } from "../observe/mod.ts";
import {
  AppStats,
  compileTrusted,
  type Handler,
  HostTable,
  LimiterRegistry,
  type LimitsStore,
  ListedRoutes,
  NotAllowedHandler,
  type Policy,
  PolicyCompiler,
  PolicyHandler,
  Router,
  RouteTable,
} from "../pipeline/mod.ts";
import type { Tracer } from "../tracing/mod.ts";
import { addressKey, type AddressRuntime, fastcgiKey, type Pool } from "../upstream/mod.ts";
import type { Clock } from "../base/mod.ts";
import type { AppEntry, Generation, RequestLimits, RouteEntry } from "./generation.ts";

/** What building a generation needs besides the config. */
export interface BuildDeps {
  readonly metrics: Metrics;
  readonly pools: ReadonlyMap<string, Pool>;
  /** Connections of single-address upstreams, by `addressKey`. */
  readonly addresses: ReadonlyMap<string, ConnPool>;
  readonly clock: Clock;
  /** The process's response cache; absent: routes with `cache:` are served uncached. */
  readonly cache?: Cache;
  /** Rate limiters kept across generations; absent: new ones for this generation. */
  readonly limiters?: LimiterRegistry;
  /** `server.limits_store`: where `limit_req` decisions are taken; absent: in the process. */
  readonly limitsStore?: LimitsStore;
  /** `server.tracing`'s tracer; absent: requests are not traced. */
  readonly tracer?: Tracer;
}

/** Deno.serve's own limit: heads over it get its 400 before scalwsd sees them. */
const DENO_MAX_HEADER_SIZE = 65_536;

/** The request limits of `server.limits`; header checks only where they are below Deno's. */
function requestLimits(cfg: Config): RequestLimits {
  const l = cfg.server.limits;
  return {
    maxUri: l.max_uri_length,
    // Deno.serve's HTTP/2 applies no count of its own (200 fields pass): always checked there.
    maxHeaderCount: l.max_header_count,
    maxHeaderSize: l.max_header_size < DENO_MAX_HEADER_SIZE ? l.max_header_size : 0,
    bodyTimeout: l.body_read_timeout,
    maxStreams: l.max_concurrent_streams,
    maxResets: l.max_resets_per_second,
  };
}

/** Builds a runtime's handler; `appPool` names the pool of a supervised application's workers. */
function createHandler(
  rt: RuntimeConfig,
  maxBody: number,
  cfg: Config,
  deps: BuildDeps,
  appPool: string,
): Handler {
  switch (rt.type) {
    case "respond":
      return new RespondHandler(rt);
    case "static":
      return new StaticHandler(rt);
    case "php": {
      const f = rt.fastcgi;
      const target = f.kind === "pool"
        ? deps.pools.get(f.pool)!
        : deps.addresses.get(fastcgiKey(f))!;
      return new PhpHandler(rt, target, maxBody, deps.clock);
    }
    case "app":
      // The workers form a pool; the proxy's pool loop serves it.
      return new PoolProxyHandler({
        runtime: {
          type: "proxy",
          target: { kind: "pool", pool: appPool },
          preserve_host: true,
          connect_timeout: rt.connect_timeout,
          response_timeout: rt.response_timeout,
          websocket: rt.websocket,
        },
        pool: deps.pools.get(appPool)!,
        maxBody,
      });
    case "proxy": {
      const t = rt.target;
      if (t.kind === "address") {
        const conns = deps.addresses.get(addressKey(rt as AddressRuntime, cfg))!;
        return new AddressProxyHandler({ runtime: rt, target: t, conns, maxBody });
      }
      if (t.kind === "pool") {
        return new PoolProxyHandler({ runtime: rt, pool: deps.pools.get(t.pool)!, maxBody });
      }
      const handlers = new Map<string, PoolProxyHandler>();
      for (const b of t.backends) {
        if (b.pool !== undefined && !handlers.has(b.pool)) {
          const pool = deps.pools.get(b.pool)!;
          handlers.set(b.pool, new PoolProxyHandler({ runtime: rt, pool, maxBody }));
        }
      }
      return new BackendsHandler(t.backends, handlers);
    }
  }
}

/** The owner tag of an application's cache entries. */
export function cacheOwner(tenant: string, app: string): string {
  return `${tenant}/${app}`;
}

/** Owners whose application or some route of it has a cache. */
export function cacheOwners(cfg: Config): Set<string> {
  const out = new Set<string>();
  for (const t of cfg.tenants) {
    for (const a of t.applications) {
      if (a.cache || a.routes.some((r) => r.cache)) out.add(cacheOwner(t.name, a.name));
    }
  }
  return out;
}

/** Compiles a validated config into an immutable generation. */
export function buildGeneration(cfg: Config, id: number, deps: BuildDeps): Generation {
  const handlers: Handler[] = [];
  const make = (rt: RuntimeConfig, maxBody: number, appPool: string) => {
    const h = createHandler(rt, maxBody, cfg, deps, appPool);
    handlers.push(h);
    return h;
  };
  const byDomain = new Map<string, AppEntry>();
  const limiters = deps.limiters ?? new LimiterRegistry(deps.clock);
  const compiler = new PolicyCompiler({ clock: deps.clock, limiters });
  // No policies: the handler itself, so a route without policies pays nothing new.
  const entry = (
    handler: Handler,
    maxBody: number,
    policies: Policy[],
    path: string,
  ): RouteEntry => ({
    handler: policies.length === 0 ? handler : new PolicyHandler(policies, handler),
    maxBody,
    policies,
    path,
  });
  for (const tenant of cfg.tenants) {
    for (const app of tenant.applications) {
      const limitReq = app.limit_req ?? cfg.server.limit_req;
      const denied = [...cfg.server.deny_paths, ...(app.deny_paths ?? [])];
      const appMax = app.max_body ?? cfg.server.max_body;
      let counters: CacheCounters | undefined;
      const owner = cacheOwner(tenant.name, app.name);
      // A route's `cache` replaces its application's; `false` turns it off there.
      // Routes told apart by headers or the query share URLs: each keeps its own entries.
      const shared = routesShareUrls(app);
      const cached = (
        h: Handler,
        c: CacheConfig | false | undefined,
        rt: RuntimeConfig,
        route: RouteConfig | null,
      ): Handler => {
        if (!c || deps.cache === undefined) return h;
        counters ??= new CacheCounters(tenant.name, app.name, deps.metrics.cacheRequests);
        return new CachedHandler({
          inner: h,
          cache: deps.cache,
          config: c,
          counters,
          owner,
          websocket: "websocket" in rt && rt.websocket === true,
          ...("response_timeout" in rt ? { fillTimeout: rt.response_timeout } : {}),
          ...(shared ? { route: routeTag(route) } : {}),
        });
      };
      const appRaw = make(app.runtime, appMax, appPoolName(tenant.name, app.name));
      const appHandler = cached(appRaw, app.cache, app.runtime, null);
      const routes = app.routes.map((r, i) => {
        const maxBody = r.max_body ?? appMax;
        // A route that names no runtime of its own shares the application's handler.
        const raw = r.runtime === app.runtime && maxBody === appMax
          ? appRaw
          : make(r.runtime, maxBody, appPoolName(tenant.name, app.name, i));
        const handler = cached(raw, r.cache ?? app.cache, r.runtime, r);
        const list = r.inherit ? [...app.policies, ...r.policies] : r.policies;
        return { ...r, value: entry(handler, maxBody, compiler.compile(list), r.path) };
      });
      const fallback = entry(appHandler, appMax, compiler.compile(app.policies), "/");
      const conditional = app.routes.some((r) =>
        r.exact || r.methods !== undefined || r.headers !== undefined || r.query !== undefined ||
        r.scheme !== undefined
      );
      const router = app.route_order === "listed"
        ? new ListedRoutes(routes, fallback)
        : conditional
        ? new RouteTable(
          routes,
          fallback,
          (allow, first) =>
            entry(
              new NotAllowedHandler(allow),
              first.value.maxBody,
              first.value.policies.slice(),
              first.value.path,
            ),
        )
        : new Router(routes, fallback);
      const appEntry: AppEntry = {
        stats: new AppStats(tenant.name, app.name, deps.metrics),
        router,
        limiter: limitReq === undefined ? null : limiters.get(
          app.limit_req ? `${tenant.name}/${app.name}` : "server",
          limitReq,
          deps.limitsStore,
        ),
        deny: denied.length === 0
          ? null
          : new Router(denied.map((path) => ({ path, value: true })), false),
      };
      for (const d of app.domains) byDomain.set(d, appEntry);
    }
  }
  const fallback = cfg.server.default_host ? byDomain.get(cfg.server.default_host) : undefined;
  const hosts = new HostTable<AppEntry>(fallback);
  for (const [d, e] of byDomain) hosts.add(d, e);
  return Object.freeze({
    id,
    config: cfg,
    hosts,
    pools: deps.pools,
    trusted: compileTrusted(cfg.server.trusted_proxies),
    handlers,
    limits: requestLimits(cfg),
    tracer: deps.tracer ?? null,
  });
}
