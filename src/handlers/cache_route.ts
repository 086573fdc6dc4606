/**
 * Routes that share URLs: an application whose routes are told apart by request headers (or by
 * the query) sends one URL to different routes, and so to different handlers. The cache keys
 * entries by URL, so each cached route of such an application selects its own entries with a
 * field of its own, `scalwsd-route`, whose value names the route: compared like a `Vary` field,
 * kept in memory and on disk, and removed with the URL by purges and invalidations.
 */
import type { RouteConfig } from "../config/mod.ts";

/** The selecting field a route's entries carry; its value is the route's tag. */
export const ROUTE_FIELD = "scalwsd-route";

/** Request fields as a tagged route's cache sees them: `ROUTE_FIELD` is its tag. */
export class RouteFields {
  constructor(
    private readonly h: { get(name: string): string | null },
    private readonly tag: string,
  ) {}

  get(name: string): string | null {
    return name === ROUTE_FIELD ? this.tag : this.h.get(name);
  }
}

/** Whether the routes of `app` can send one URL to different handlers (header or query conditions). */
export function routesShareUrls(app: { readonly routes: readonly RouteConfig[] }): boolean {
  return app.routes.some((r) => r.headers !== undefined || r.query !== undefined);
}

/** A route's tag: its matching rules, stable across reloads that keep them. */
export function routeTag(r: RouteConfig | null): string {
  if (r === null) return "(application)";
  return JSON.stringify([
    r.path,
    r.exact,
    r.methods ?? null,
    r.headers ?? null,
    r.query ?? null,
    r.scheme ?? null,
  ]);
}
