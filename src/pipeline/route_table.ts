/**
 * Route matching with conditions: `exact` paths, `methods`, `headers` and `query`. Routes are
 * grouped by path; groups are tried most specific first (exact paths, then longer prefixes),
 * and the first group with a route whose headers and query match decides: its route that
 * takes the method and has the most conditions wins (file order breaks ties), and when none
 * takes the method the group's `notAllowed` entry answers (405 with `Allow`). No group: the
 * fallback (the application's own runtime). Applications without conditions use `Router`.
 */
import type { RouteConfig } from "../config/mod.ts";
import type { Exchange } from "./exchange.ts";
import { requestHeader, requestMethod } from "./request_view.ts";

/** One route as the table needs it: a configured route's conditions and what it gives. */
export type RouteSpec<T> =
  & Pick<RouteConfig, "path" | "exact" | "methods" | "headers" | "query" | "scheme">
  & { readonly value: T };

interface Compiled<T> {
  readonly methods: readonly string[] | null;
  readonly headers: readonly (readonly [string, string])[];
  readonly query: readonly (readonly [string, string])[];
  /** null: either; true: over TLS only; false: plain only. */
  readonly secure: boolean | null;
  readonly value: T;
}

interface Group<T> {
  readonly path: string;
  readonly exact: boolean;
  /** Most conditions first. */
  readonly routes: readonly Compiled<T>[];
  /** The answer when a route of the group matches all but the method. */
  readonly notAllowed: T;
}

/**
 * Conditions of a route: the method list counts as one, each header and query pair as one, the
 * scheme as one.
 */
export function conditionCount(r: Omit<RouteSpec<unknown>, "value">): number {
  return (r.methods !== undefined ? 1 : 0) + Object.keys(r.headers ?? {}).length +
    Object.keys(r.query ?? {}).length + (r.scheme !== undefined ? 1 : 0);
}

/** `?a=1&b=x+y` as decoded pairs; a malformed escape leaves the raw text. */
export function parseQuery(query: string): Map<string, string> {
  const out = new Map<string, string>();
  if (query.length <= 1) return out;
  for (const pair of query.slice(1).split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const k = decode(eq < 0 ? pair : pair.slice(0, eq));
    if (!out.has(k)) out.set(k, eq < 0 ? "" : decode(pair.slice(eq + 1)));
  }
  return out;
}

function decode(s: string): string {
  const t = s.indexOf("+") >= 0 ? s.replaceAll("+", " ") : s;
  if (t.indexOf("%") < 0) return t;
  try {
    return decodeURIComponent(t);
  } catch {
    return t;
  }
}

export class RouteTable<T> {
  private readonly groups: Group<T>[];
  private readonly usesQuery: boolean;

  /**
   * `notAllowed(allow, first)` makes the 405 entry of a group whose methods are `allow`;
   * `first` is the group's most specific route (its policies answer preflights, for example).
   */
  constructor(
    routes: readonly RouteSpec<T>[],
    private readonly fallback: T,
    notAllowed: (allow: readonly string[], first: RouteSpec<T>) => T,
  ) {
    const byKey = new Map<string, RouteSpec<T>[]>();
    for (const r of routes) {
      const key = `${r.exact ? "=" : "^"}${r.path}`;
      const list = byKey.get(key);
      if (list === undefined) byKey.set(key, [r]);
      else list.push(r);
    }
    const groups: Group<T>[] = [];
    for (const list of byKey.values()) {
      const sorted = list
        .map((r, i) => ({ r, i, n: conditionCount(r) }))
        .sort((a, b) => b.n - a.n || a.i - b.i)
        .map(({ r }) => r);
      const allow: string[] = [];
      for (const r of sorted) {
        for (const m of r.methods ?? []) if (!allow.includes(m)) allow.push(m);
      }
      groups.push({
        path: list[0].path,
        exact: list[0].exact,
        routes: sorted.map((r) => ({
          methods: r.methods ?? null,
          headers: Object.entries(r.headers ?? {}),
          query: Object.entries(r.query ?? {}),
          secure: r.scheme === undefined ? null : r.scheme === "https",
          value: r.value,
        })),
        notAllowed: notAllowed(allow, sorted[0]),
      });
    }
    // Exact paths first, then longer prefixes.
    groups.sort((a, b) => a.exact !== b.exact ? (a.exact ? -1 : 1) : b.path.length - a.path.length);
    this.groups = groups;
    this.usesQuery = routes.some((r) => r.query !== undefined);
  }

  match(path: string, ex: Exchange): T {
    const method = requestMethod(ex);
    let query: Map<string, string> | null = null;
    if (this.usesQuery) query = parseQuery(ex.query);
    const gs = this.groups;
    for (let g = 0; g < gs.length; g++) {
      const group = gs[g];
      const p = group.path;
      if (group.exact) {
        if (path !== p) continue;
      } else if (
        p !== "/" &&
        !(path.startsWith(p) && (path.length === p.length || path.charCodeAt(p.length) === 47))
      ) continue;
      let seen = false;
      const rs = group.routes;
      for (let i = 0; i < rs.length; i++) {
        const r = rs[i];
        if (!conditionsMatch(r, ex, query)) continue;
        seen = true;
        if (r.methods === null || r.methods.includes(method)) return r.value;
      }
      if (seen) return group.notAllowed;
    }
    return this.fallback;
  }
}

function conditionsMatch<T>(r: Compiled<T>, ex: Exchange, query: Map<string, string> | null) {
  if (r.secure !== null && r.secure !== ex.secure) return false;
  const hs = r.headers;
  for (let i = 0; i < hs.length; i++) {
    if (requestHeader(ex, hs[i][0]) !== hs[i][1]) return false;
  }
  const qs = r.query;
  for (let i = 0; i < qs.length; i++) {
    if (query === null || query.get(qs[i][0]) !== qs[i][1]) return false;
  }
  return true;
}
