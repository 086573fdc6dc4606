/**
 * The shape of one generation: everything built from one configuration (hosts, routes with their
 * handlers and limits, applications), swapped whole on reload; requests keep the generation they
 * started with. Types only; `build.ts` builds it.
 *
 * @module
 */

import type { Config } from "../config/mod.ts";
import type {
  AppStats,
  Exchange,
  Handler,
  HostTable,
  Policy,
  RateLimiter,
  Router,
} from "../pipeline/mod.ts";
import type { Pool } from "../upstream/mod.ts";
import type { Tracer } from "../tracing/mod.ts";

/** The handler of one route (or an application's own runtime) and its body limit. */
export interface RouteEntry {
  /** The runtime's handler, behind the route's policies when it has any. */
  readonly handler: Handler;
  /** Bytes. */
  readonly maxBody: number;
  /** The route's compiled policies (empty when none). */
  readonly policies: readonly Policy[];
  /** The route's `path` as configured; `/` for the application's own runtime (`http.route`). */
  readonly path: string;
}

/** `Router` (paths only) or `RouteTable` (paths with conditions). */
export interface RouteMatcher<T> {
  match(path: string, ex: Exchange): T;
}

/** One application as the request path sees it. */
export interface AppEntry {
  readonly stats: AppStats;
  readonly router: RouteMatcher<RouteEntry>;
  /** `limit_req` of the application or the server; null when none. */
  readonly limiter: RateLimiter | null;
  /** `deny_paths` of the server and the application (true for a denied path); null when none. */
  readonly deny: Router<boolean> | null;
}

/** `server.limits` as the request path checks them; 0 means no check. */
export interface RequestLimits {
  /** Bytes of path and query (414). */
  readonly maxUri: number;
  /** Header lines (431); 0 when Deno's own limit applies. */
  readonly maxHeaderCount: number;
  /** Bytes of header lines (431); 0 when Deno's own limit applies. */
  readonly maxHeaderSize: number;
  /** Milliseconds between request body chunks (408). */
  readonly bodyTimeout: number;
  /** HTTP/2 requests in flight per connection (429 past it). */
  readonly maxStreams: number;
  /** HTTP/2 streams per connection per second ended unanswered (GOAWAY past it); 0: no cap. */
  readonly maxResets: number;
}

/**
 * An immutable snapshot of everything a request needs: swapped by one assignment on reload;
 * a request keeps the generation it started with.
 */
export interface Generation {
  readonly id: number;
  readonly config: Config;
  readonly hosts: HostTable<AppEntry>;
  /** Pools by name, shared with later generations when their settings do not change. */
  readonly pools: ReadonlyMap<string, Pool>;
  /** The client address after `trusted_proxies`. */
  readonly trusted: (ip: string) => boolean;
  readonly handlers: readonly Handler[];
  readonly limits: RequestLimits;
  /** `server.tracing`: samples requests and exports their spans; null: no tracing. */
  readonly tracer: Tracer | null;
}
