/**
 * Route matching: the longest route path that is a segment-aligned prefix of the normalised
 * request path (`/api` matches `/api` and `/api/x`, not `/apix`). Routes are sorted longest
 * first once per generation, so the first hit is the answer.
 */

export interface Routed<T> {
  readonly path: string;
  readonly value: T;
}

export class Router<T> {
  private readonly routes: Routed<T>[];
  constructor(routes: readonly Routed<T>[], private readonly fallback: T) {
    this.routes = [...routes].sort((a, b) => b.path.length - a.path.length);
  }

  /** The second parameter is for `RouteTable`'s sake: both are called the same way. */
  match(path: string, _ex?: unknown): T {
    const rs = this.routes;
    for (let i = 0; i < rs.length; i++) {
      const p = rs[i].path;
      if (p === "/") return rs[i].value;
      if (
        path.startsWith(p) && (path.length === p.length || path.charCodeAt(p.length) === 47)
      ) return rs[i].value;
    }
    return this.fallback;
  }
}
