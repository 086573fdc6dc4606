/**
 * Provisioning of `tenants:`: tenants, their applications and routes (runtime, policies,
 * `cache`, conditions), and the routes of one application that cannot be told apart.
 */
import { formatPath, parseUnit, type Path } from "./issues.ts";
import { type PolicyContext, provisionPolicies } from "./policies.ts";
import {
  type Context,
  type Draft,
  type DraftApplication,
  type DraftTenant,
  field,
  isRecord,
  listField,
  type Sink,
} from "./provision_draft.ts";
import { chooseRuntime } from "./provision_runtimes.ts";
import { limitReq } from "./provision_server.ts";
import { applicationSchema, cacheSchema, routeSchema, tenantSchema } from "./schema.ts";
import type { CacheConfig, RouteConfig } from "./types.ts";

/** `cache.max_object_size`: 8 MiB. */
export const DEFAULT_MAX_OBJECT_SIZE = 8 * 1024 * 1024;

/**
 * Caches whose `max_object_size` was not written (so 8 MiB): validation lowers it to a smaller
 * store's size instead of refusing a key the operator never wrote.
 */
export const DEFAULTED_OBJECT_SIZE = new WeakSet<CacheConfig>();

/** `cache.stale_while_revalidate`: 60 s. */
export const DEFAULT_STALE_WHILE_REVALIDATE = 60_000;

export function provisionTenants(value: unknown, base: Path, draft: Draft, ctx: Context): void {
  const sink = ctx;
  if (value === undefined) return;
  if (!Array.isArray(value)) {
    sink.errors.push(`${formatPath(base)}: must be a list`);
    return;
  }
  for (let i = 0; i < value.length; i++) {
    const at: Path = [...base, i];
    const raw = parseUnit(tenantSchema, value[i], at, sink.errors);
    const tenant: DraftTenant = { path: formatPath(at), name: raw?.name, applications: [] };
    draft.tenants.push(tenant);
    if (raw === undefined) draft.allApplications = false;
    // Applications are checked even when the tenant has an error, to report everything.
    const apps = raw?.applications ?? listField(value[i], "applications");
    for (let j = 0; j < apps.length; j++) {
      const app = provisionApplication(apps[j], [...at, "applications", j], draft, ctx);
      if (app !== undefined) tenant.applications.push(app);
    }
  }
}

/**
 * Builds an application; routes get normalised paths, and routes that cannot be told apart
 * (same path, `exact`, headers and query, overlapping methods) are errors. A route without a
 * runtime of its own but with policies uses the application's runtime. Its runtime, policies
 * and routes are checked even when the application itself has an error.
 */
function provisionApplication(
  value: unknown,
  at: Path,
  draft: Draft,
  ctx: Context,
): DraftApplication | undefined {
  const sink = ctx;
  const before = sink.errors.length;
  const raw = parseUnit(applicationSchema, value, at, sink.errors);
  const runtime = chooseRuntime(field(value, "runtime"), field(value, "proxy"), at, draft, sink);
  const cache = provisionCache(field(value, "cache"), [...at, "cache"], false, sink);
  const pctx: PolicyContext = {
    dir: ctx.dir,
    readFile: ctx.readFile,
    errors: sink.errors,
    warnings: sink.warnings,
  };
  const policies = provisionPolicies(field(value, "policies"), [...at, "policies"], pctx);
  const routes: RouteConfig[] = [];
  const placed: { route: RouteConfig; path: string }[] = [];
  // In file order the first route that matches wins: a later twin is never reached, not an error.
  const listed = field(value, "route_order") === "listed";
  const rawRoutes = raw?.routes ?? listField(value, "routes");
  for (let i = 0; i < rawRoutes.length; i++) {
    const routeAt: Path = [...at, "routes", i];
    const route = parseUnit(routeSchema, rawRoutes[i], routeAt, sink.errors);
    const routePolicies = provisionPolicies(
      field(rawRoutes[i], "policies"),
      [...routeAt, "policies"],
      pctx,
    );
    const routeCache = provisionCache(
      field(rawRoutes[i], "cache"),
      [...routeAt, "cache"],
      true,
      sink,
    );
    // Without a runtime of its own, a route with policies, conditions, `cache` or `max_body`
    // uses the application's.
    const ownRuntime = field(rawRoutes[i], "runtime") !== undefined ||
      field(rawRoutes[i], "proxy") !== undefined ||
      !ROUTE_EXTRAS.some((k) => field(rawRoutes[i], k) !== undefined);
    const routeRuntime = ownRuntime
      ? chooseRuntime(
        field(rawRoutes[i], "runtime"),
        field(rawRoutes[i], "proxy"),
        routeAt,
        draft,
        sink,
      )
      : runtime;
    if (route === undefined || routeRuntime === undefined || routePolicies === undefined) continue;
    const config: RouteConfig = {
      path: route.path,
      exact: route.exact ?? false,
      ...(route.methods !== undefined ? { methods: [...new Set(route.methods)] } : {}),
      ...(route.headers !== undefined
        ? {
          headers: Object.fromEntries(
            Object.entries(route.headers).map(([k, v]) => [k.toLowerCase(), v]),
          ),
        }
        : {}),
      ...(route.query !== undefined ? { query: { ...route.query } } : {}),
      ...(route.scheme !== undefined ? { scheme: route.scheme } : {}),
      runtime: routeRuntime,
      ...(route.max_body !== undefined ? { max_body: route.max_body } : {}),
      ...(routeCache !== undefined ? { cache: routeCache } : {}),
      policies: routePolicies,
      inherit: route.inherit ?? true,
    };
    const routePath = formatPath(routeAt);
    for (const other of listed ? [] : placed) {
      const clash = routeClash(other.route, config);
      if (clash === "duplicate") {
        sink.errors.push(`${routePath}.path: duplicate route "${config.path}"`);
        break;
      }
      if (clash !== undefined) {
        sink.errors.push(`${routePath}: cannot be told apart from ${other.path} (${clash})`);
        break;
      }
    }
    placed.push({ route: config, path: routePath });
    routes.push(config);
  }
  if (raw === undefined) {
    draft.allApplications = false;
    return undefined;
  }
  const ok = runtime !== undefined && policies !== undefined && sink.errors.length === before;
  return {
    path: formatPath(at),
    name: raw.name,
    domains: raw.domains,
    config: ok
      ? {
        name: raw.name,
        domains: raw.domains,
        runtime,
        routes,
        ...(raw.route_order === "listed" ? { route_order: "listed" as const } : {}),
        ...(raw.max_body !== undefined ? { max_body: raw.max_body } : {}),
        ...(raw.limit_req !== undefined ? { limit_req: limitReq(raw.limit_req) } : {}),
        ...(raw.deny_paths !== undefined ? { deny_paths: raw.deny_paths } : {}),
        ...(cache ? { cache } : {}),
        policies,
      }
      : undefined,
  };
}

/**
 * `cache:` of an application (`allowOff` false) or a route (`false` turns it off); undefined
 * when absent or in error.
 */
function provisionCache(
  value: unknown,
  at: Path,
  allowOff: boolean,
  sink: Sink,
): CacheConfig | false | undefined {
  if (value === undefined) return undefined;
  if (value === false && allowOff) return false;
  if (!isRecord(value)) {
    sink.errors.push(`${formatPath(at)}: must be a mapping${allowOff ? " or false" : ""}`);
    return undefined;
  }
  const raw = parseUnit(cacheSchema, value, at, sink.errors);
  if (raw === undefined) return undefined;
  const c: CacheConfig = {
    stale_while_revalidate: raw.stale_while_revalidate ?? DEFAULT_STALE_WHILE_REVALIDATE,
    stale_if_error: raw.stale_if_error ?? 0,
    stale_if_disconnected: raw.stale_if_disconnected ?? 0,
    max_object_size: raw.max_object_size ?? DEFAULT_MAX_OBJECT_SIZE,
    key_headers: [...new Set((raw.key_headers ?? []).map((h) => h.toLowerCase()))],
    ignore_query: raw.ignore_query ?? false,
    store_set_cookie: raw.store_set_cookie ?? false,
    targeted_field: (raw.targeted_field ?? "CDN-Cache-Control").toLowerCase(),
  };
  if (raw.max_object_size === undefined) DEFAULTED_OBJECT_SIZE.add(c);
  return c;
}

/** Route keys that make sense with the application's runtime. */
const ROUTE_EXTRAS = [
  "policies",
  "inherit",
  "exact",
  "methods",
  "headers",
  "query",
  "scheme",
  "cache",
  "max_body",
] as const;

function sameRecord(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  return ka.every((k) => b !== undefined && Object.hasOwn(b, k) && b[k] === a![k]);
}

/**
 * Whether two routes can never be told apart: same path, `exact`, headers and query, and
 * methods that overlap (absent means all). Returns "duplicate" for two plain routes of one
 * path, a reason otherwise, undefined when they differ.
 */
export function routeClash(a: RouteConfig, b: RouteConfig): string | undefined {
  if (a.path !== b.path || a.exact !== b.exact) return undefined;
  // A scheme condition on one of them (or different ones) tells them apart.
  if (a.scheme !== b.scheme) return undefined;
  if (!sameRecord(a.headers, b.headers) || !sameRecord(a.query, b.query)) return undefined;
  const plain = (r: RouteConfig) =>
    r.methods === undefined && r.headers === undefined && r.query === undefined;
  if (plain(a) && plain(b)) return "duplicate";
  if (a.methods === undefined || b.methods === undefined) {
    return "same path, exact, headers and query; one takes every method";
  }
  const shared = a.methods.filter((m) => b.methods!.includes(m));
  if (shared.length === 0) return undefined;
  return `same path, exact, headers and query; both take ${shared.join(", ")}`;
}
