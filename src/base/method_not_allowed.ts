/**
 * A known path asked with a method it does not take: the methods it does take, from a router's
 * route list, and the `405` message that names them (the admin API and the control socket).
 */

/** One route as a router (Hono's `app.routes`) lists it: `/v1/upstreams/:name`, `GET`. */
export interface RouteEntry {
  readonly method: string;
  readonly path: string;
}

/** The methods routes take on `path` (in a fixed order); empty for an unknown path. */
export function allowedMethods(routes: readonly RouteEntry[], path: string): string[] {
  const methods = new Set<string>();
  for (const r of routes) {
    if (r.path.includes("*") || r.method === "ALL") continue;
    const pattern = "^" +
      r.path.replace(/[.]/g, "\\.").replace(/:[a-z_]+(\{[^}]*\})?/g, "[^/]+") + "$";
    if (new RegExp(pattern).test(path)) methods.add(r.method);
  }
  return ["GET", "HEAD", "POST", "PUT", "DELETE"].filter((m) => methods.has(m));
}

/** `GET is not allowed on /v1/reload; use POST` for `allowed` (not empty). */
export function methodNotAllowed(method: string, path: string, allowed: readonly string[]): string {
  const use = allowed.length === 1
    ? allowed[0]
    : `${allowed.slice(0, -1).join(", ")} or ${allowed[allowed.length - 1]}`;
  return `${method} is not allowed on ${path}; use ${use}`;
}
