/**
 * Routes tried in the order they are listed (`route_order: listed`): the first route whose
 * path (exact, or a segment-aligned prefix), method, scheme, headers and query all match wins; none:
 * the fallback (the application's own runtime). No grouping by path and no `405`: a method
 * that does not match is one more condition that fails. The Kubernetes Gateway API orders an
 * HTTPRoute's matches this way once they are sorted by its precedence rules (`scalwsd gateway`
 * sorts them when it writes the configuration); `RouteTable` is the default order.
 */
import type { Exchange } from "./exchange.ts";
import { requestHeader, requestMethod } from "./request_view.ts";
import { parseQuery, type RouteSpec } from "./route_table.ts";

interface Listed<T> {
  readonly path: string;
  readonly exact: boolean;
  readonly methods: readonly string[] | null;
  readonly headers: readonly (readonly [string, string])[];
  readonly query: readonly (readonly [string, string])[];
  readonly secure: boolean | null;
  readonly value: T;
}

export class ListedRoutes<T> {
  private readonly routes: readonly Listed<T>[];
  private readonly usesQuery: boolean;

  constructor(routes: readonly RouteSpec<T>[], private readonly fallback: T) {
    this.routes = routes.map((r) => ({
      path: r.path,
      exact: r.exact,
      methods: r.methods ?? null,
      headers: Object.entries(r.headers ?? {}),
      query: Object.entries(r.query ?? {}),
      secure: r.scheme === undefined ? null : r.scheme === "https",
      value: r.value,
    }));
    this.usesQuery = routes.some((r) => r.query !== undefined);
  }

  match(path: string, ex: Exchange): T {
    const method = requestMethod(ex);
    const query = this.usesQuery ? parseQuery(ex.query) : null;
    const rs = this.routes;
    next: for (let i = 0; i < rs.length; i++) {
      const r = rs[i];
      const p = r.path;
      if (r.exact) {
        if (path !== p) continue;
      } else if (
        p !== "/" &&
        !(path.startsWith(p) && (path.length === p.length || path.charCodeAt(p.length) === 47))
      ) continue;
      if (r.methods !== null && !r.methods.includes(method)) continue;
      if (r.secure !== null && r.secure !== ex.secure) continue;
      const hs = r.headers;
      for (let j = 0; j < hs.length; j++) {
        if (requestHeader(ex, hs[j][0]) !== hs[j][1]) continue next;
      }
      const qs = r.query;
      for (let j = 0; j < qs.length; j++) {
        if (query === null || query.get(qs[j][0]) !== qs[j][1]) continue next;
      }
      return r.value;
    }
    return this.fallback;
  }
}
