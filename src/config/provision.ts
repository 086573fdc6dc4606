/**
 * Provision: runs each unit of the document through its schema, then fills in defaults and
 * builds the typed objects of `types.ts`. Rules between fields of one object (`hash` only
 * with `balance: hash`, `upstream` or `backends`, `tls_ca_file` only with `https://`) are
 * checked here; rules across the document are in `validate.ts`.
 */
import { isLoopbackAddress } from "./address.ts";
import { formatPath, parseUnit, type Path } from "./issues.ts";
import { poolMemberErrors, validateMembers } from "./members.ts";
import {
  applicationSchema,
  cacheSchema,
  poolSchema,
  proxyShorthandSchema,
  type RawPool,
  type RawProxy,
  type RawRuntime,
  type RawServer,
  routeSchema,
  runtimeSchema,
  serverSchema,
  tenantSchema,
} from "./schema.ts";
import {
  type PolicyContext,
  provisionPolicies,
  provisionRedirect,
  type ReadFile,
} from "./policies.ts";
import { nameError } from "./syntax.ts";
import type {
  ApplicationConfig,
  AppRuntime,
  BackendEntry,
  CacheConfig,
  DnsConfig,
  FastcgiTarget,
  HashConfig,
  LimitReqConfig,
  PhpRuntime,
  PoolConfig,
  ProxyRuntime,
  ProxyTarget,
  RouteConfig,
  RuntimeConfig,
  ServerConfig,
} from "./types.ts";

type RawPhp = Extract<RawRuntime, { type: "php" }>;
type RawAppRuntime = Extract<RawRuntime, { type: "app" | "node" | "python" | "deno" }>;

/** Where errors and warnings go, each as `PATH: MESSAGE`. */
export interface Sink {
  readonly errors: string[];
  readonly warnings: string[];
}

/** Where files named by the document are read from. */
export interface Files {
  /** Directory of the main file: relative names in it are resolved against it. */
  readonly dir: string;
  readonly readFile: ReadFile;
}

const DEFAULT_FILES: Files = { dir: ".", readFile: (p) => Deno.readFileSync(p) };

/** A use of a pool by name, checked against `upstreams` in `validate.ts`. */
export interface PoolRef {
  readonly pool: string;
  /** The protocol the pool must speak: `fastcgi` for `type: php`, else `http`. */
  readonly protocol?: "http" | "fastcgi";
  /** Path of the field naming the pool (`...runtime.upstream.pool`). */
  readonly path: string;
}

export interface DraftApplication {
  readonly path: string;
  readonly name: string;
  readonly domains: readonly string[];
  /** Undefined when the application has errors. */
  readonly config?: ApplicationConfig;
}

export interface DraftTenant {
  readonly path: string;
  /** The site file it came from; undefined for the main file. */
  readonly file?: string;
  /** Undefined when the tenant itself failed its schema. */
  readonly name?: string;
  readonly applications: DraftApplication[];
}

/** The provisioned parts of a document; a part is missing when it has errors. */
export interface Draft {
  server?: ServerConfig;
  readonly pools: Map<string, PoolConfig>;
  /** Every pool name declared in `upstreams`, valid or not, so references resolve. */
  readonly poolNames: Set<string>;
  readonly tenants: DraftTenant[];
  readonly poolRefs: PoolRef[];
  /** False when some application failed its schema, so the set of domains is incomplete. */
  allApplications: boolean;
  /** The main file, to name it when a site file repeats one of its domains. */
  mainFile?: string;
}

/** 10 MiB. */
export const DEFAULT_MAX_BODY = 10 * 1024 * 1024;
/** `server.cache.max_size`: 256 MiB. */
export const DEFAULT_CACHE_SIZE = 256 * 1024 * 1024;
/** `cache.max_object_size`: 8 MiB. */
export const DEFAULT_MAX_OBJECT_SIZE = 8 * 1024 * 1024;
/** `cache.stale_while_revalidate`: 60 s. */
export const DEFAULT_STALE_WHILE_REVALIDATE = 60_000;
/** 10 s. */
export const DEFAULT_HANDSHAKE_TIMEOUT = 10_000;
export const DEFAULT_AFFINITY_COOKIE = "SCALWS_AFFINITY";
export const STICKY_COOKIE_PREFIX = "SCALWS_STICKY_";

const ROOT_KEYS = new Set(["server", "upstreams", "tenants"]);

/** Not `push(...list)`: a 10,000-member list may hold more errors than a call takes. */
function append(to: string[], list: readonly string[]): void {
  for (const item of list) to.push(item);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Provisions a whole document (the YAML as plain data). An empty document is an empty
 * mapping; a missing `server` is an empty one (and so lacks listeners); `upstreams` and
 * `tenants` default to empty.
 */
export function provision(data: unknown, sink: Sink, files: Files = DEFAULT_FILES): Draft {
  const draft: Draft = {
    pools: new Map(),
    poolNames: new Set(),
    tenants: [],
    poolRefs: [],
    allApplications: true,
  };
  const doc = data ?? {};
  if (!isRecord(doc)) {
    sink.errors.push("(root): must be a mapping");
    return draft;
  }
  for (const key in doc) {
    if (!ROOT_KEYS.has(key)) sink.errors.push(`(root): unknown key "${key}"`);
  }
  const server = parseUnit(serverSchema, doc.server ?? {}, ["server"], sink.errors);
  if (server !== undefined) draft.server = provisionServer(server, sink);
  provisionUpstreams(doc.upstreams, draft, sink);
  provisionTenants(doc.tenants, ["tenants"], draft, { ...sink, ...files });
  return draft;
}

/**
 * Adds the tenants of a site file (already parsed; `file` as it is named in messages, `dir`
 * its directory): only `tenants` is allowed there.
 */
export function provisionSite(
  data: unknown,
  file: string,
  draft: Draft,
  sink: Sink,
  files: Files,
): void {
  const doc = data ?? {};
  if (!isRecord(doc)) {
    sink.errors.push(`${file}: (root): must be a mapping`);
    return;
  }
  for (const key in doc) {
    if (key === "upstreams" || key === "server") {
      sink.errors.push(
        `${file}: ${key}: not allowed in a site file; a site file holds tenants only ` +
          `(${key === "upstreams" ? "pools are" : "server settings are"} defined in the main file)`,
      );
    } else if (key !== "tenants") sink.errors.push(`${file}: (root): unknown key "${key}"`);
  }
  const dir = file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : ".";
  const from = draft.tenants.length;
  provisionTenants(doc.tenants, [`${file}: tenants`], draft, {
    ...sink,
    ...files,
    dir,
  });
  for (let i = from; i < draft.tenants.length; i++) {
    (draft.tenants[i] as { file?: string }).file = file;
  }
}

function provisionServer(raw: RawServer, sink: Sink): ServerConfig {
  const admin = raw.admin ?? {};
  if (admin.http !== undefined && !isLoopbackAddress(admin.http.address)) {
    sink.errors.push(
      "server.admin.http.address: must be a loopback address (127.0.0.0/8, ::1 or localhost)",
    );
  }
  const limits = raw.limits ?? {};
  return {
    listeners: (raw.listeners ?? []).map((l, i) => ({
      name: l.name,
      ...l.address,
      ...(l.redirect !== undefined
        ? {
          redirect: provisionRedirect(
            l.redirect,
            ["server", "listeners", i, "redirect"],
            sink.errors,
          ),
        }
        : {}),
      ...(l.tls !== undefined
        ? {
          tls: {
            certificates: l.tls.certificates.map((c) => ({
              cert: c.cert,
              key: c.key,
              ...(c.domains !== undefined ? { domains: c.domains } : {}),
            })),
            handshake_timeout: l.tls.handshake_timeout ?? DEFAULT_HANDSHAKE_TIMEOUT,
            strict_sni: l.tls.strict_sni ?? true,
          },
        }
        : {}),
    })),
    admin: {
      ...(admin.socket !== undefined ? { socket: admin.socket } : {}),
      ...(admin.remote !== undefined
        ? { remote: { ...admin.remote.address, tls: { ...admin.remote.tls } } }
        : {}),
      ...(admin.http !== undefined ? { http: { ...admin.http.address } } : {}),
    },
    metrics: raw.metrics?.address !== undefined ? { ...raw.metrics.address } : {},
    trusted_proxies: raw.trusted_proxies ?? [],
    access_log: raw.access_log ?? "stdout",
    ...(raw.default_host !== undefined ? { default_host: raw.default_host } : {}),
    max_body: raw.max_body ?? DEFAULT_MAX_BODY,
    ...(raw.affinity_key_file !== undefined ? { affinity_key_file: raw.affinity_key_file } : {}),
    ...(raw.state_dir !== undefined ? { state_dir: raw.state_dir } : {}),
    ...(raw.resolver !== undefined ? { resolver: raw.resolver } : {}),
    upstream_client: {
      keepalive: raw.upstream_client?.keepalive ?? 32,
      idle_timeout: raw.upstream_client?.idle_timeout ?? 60_000,
    },
    listener_mode: raw.listener_mode ?? "shared",
    limits: {
      header_read_timeout: limits.header_read_timeout ?? 60_000,
      idle_timeout: limits.idle_timeout ?? 75_000,
      body_read_timeout: limits.body_read_timeout ?? 60_000,
      max_header_size: limits.max_header_size ?? 65_536,
      max_header_count: limits.max_header_count ?? 128,
      max_uri_length: limits.max_uri_length ?? 8_192,
      max_connections: limits.max_connections ?? 0,
    },
    ...(raw.limit_req !== undefined ? { limit_req: limitReq(raw.limit_req) } : {}),
    ...(raw.limit_conn !== undefined ? { limit_conn: raw.limit_conn } : {}),
    deny_paths: raw.deny_paths ?? [],
    include: raw.include ?? [],
    cache: { max_size: raw.cache?.max_size ?? DEFAULT_CACHE_SIZE },
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
  return {
    stale_while_revalidate: raw.stale_while_revalidate ?? DEFAULT_STALE_WHILE_REVALIDATE,
    stale_if_error: raw.stale_if_error ?? 0,
    max_object_size: raw.max_object_size ?? DEFAULT_MAX_OBJECT_SIZE,
    key_headers: [...new Set((raw.key_headers ?? []).map((h) => h.toLowerCase()))],
    ignore_query: raw.ignore_query ?? false,
    store_set_cookie: raw.store_set_cookie ?? false,
  };
}

/** `limit_req` with its default `burst: 0`. */
function limitReq(raw: NonNullable<RawServer["limit_req"]>): LimitReqConfig {
  return { rate: raw.rate, burst: raw.burst ?? 0 };
}

function provisionUpstreams(value: unknown, draft: Draft, sink: Sink): void {
  if (value === undefined) return;
  if (!isRecord(value)) {
    sink.errors.push("upstreams: must be a mapping");
    return;
  }
  for (const name in value) {
    const error = nameError(name);
    if (error !== undefined) {
      sink.errors.push(`upstreams.${name}: ${error}`);
      continue;
    }
    draft.poolNames.add(name);
    const raw = parseUnit(poolSchema, value[name], ["upstreams", name], sink.errors);
    if (raw === undefined) {
      // The member list does not depend on the other keys: report its errors as well.
      const members = field(value[name], "members");
      if (members !== undefined) {
        append(sink.errors, validateMembers(members, `upstreams.${name}`).errors);
      }
      continue;
    }
    const pool = provisionPool(name, raw, sink);
    if (pool !== undefined) draft.pools.set(name, pool);
  }
}

/**
 * Builds one pool with its defaults: members `[]`, `members_from: file`,
 * `balance: round_robin`, passive health 3 failures / 10 s, retries 1, keepalive 32,
 * `scheme: http`; health check 5 s / 3 s / rise 2 / fall 2 when present; sticky cookie
 * `SCALWS_STICKY_<pool>`. Warns about a file pool without members.
 */
export function provisionPool(name: string, raw: RawPool, sink: Sink): PoolConfig | undefined {
  const path = `upstreams.${name}`;
  const before = sink.errors.length;
  const scheme = raw.scheme ?? "http";
  const membersFrom = raw.members_from ?? "file";
  const balance = raw.balance ?? "round_robin";
  const result = validateMembers(raw.members ?? [], path);
  append(sink.errors, result.errors);
  const members = result.members ?? [];
  append(sink.errors, poolMemberErrors(members, scheme, path));
  if (result.members !== undefined && members.length === 0 && membersFrom === "file") {
    sink.warnings.push(`${path}.members: pool has no members; requests get 503`);
  }

  const dns = provisionDns(raw, path, sink);

  let hash: HashConfig | undefined;
  if (balance === "hash") {
    if (raw.hash === undefined) sink.errors.push(`${path}.hash: is required with balance: hash`);
    else hash = provisionHash(raw.hash, `${path}.hash`, sink);
  } else if (raw.hash !== undefined) {
    sink.errors.push(`${path}.hash: only allowed with balance: hash`);
  }
  const protocol = raw.protocol ?? "http";
  if (protocol === "fastcgi") {
    if (raw.scheme === "https") {
      sink.errors.push(`${path}.scheme: not allowed with protocol: fastcgi`);
    }
    if (raw.health_check?.path !== undefined) {
      sink.errors.push(
        `${path}.health_check.path: not allowed with protocol: fastcgi (checks connect only)`,
      );
    }
  }
  if (raw.tls !== undefined && scheme !== "https") {
    sink.errors.push(`${path}.tls: only allowed with scheme: https`);
  }
  const sticky = raw.sticky === undefined ? undefined : {
    ttl: raw.sticky.ttl,
    cookie: raw.sticky.cookie ?? `${STICKY_COOKIE_PREFIX}${name}`,
  };
  if (sticky !== undefined && hash?.by === "cookie" && hash.name === sticky.cookie) {
    sink.errors.push(`${path}.sticky.cookie: must differ from hash.name "${hash.name}"`);
  }
  if (sink.errors.length !== before) return undefined;

  const hc = raw.health_check;
  return {
    name,
    members,
    members_from: membersFrom,
    ...(dns !== undefined ? { dns } : {}),
    balance,
    ...(hash !== undefined ? { hash } : {}),
    passive_health: {
      failures: raw.passive_health?.failures ?? 3,
      cooldown: raw.passive_health?.cooldown ?? 10_000,
    },
    retries: raw.retries ?? 1,
    keepalive: raw.keepalive ?? 32,
    protocol,
    scheme,
    ...(raw.tls !== undefined ? { tls: { ...raw.tls } } : {}),
    ...(hc !== undefined
      ? {
        health_check: {
          ...(hc.path !== undefined ? { path: hc.path } : {}),
          interval: hc.interval ?? 5_000,
          timeout: hc.timeout ?? 3_000,
          rise: hc.rise ?? 2,
          fall: hc.fall ?? 2,
        },
      }
      : {}),
    ...(sticky !== undefined ? { sticky } : {}),
  };
}

/**
 * `dns` of a `members_from: dns` pool with its defaults: `type: A`, `refresh: ttl`,
 * `min_refresh: 1s`, `max_refresh: 5m`, `grace: 60s`. `port` is required for A and AAAA and
 * refused for SRV; `members` and `dns` exclude each other.
 */
function provisionDns(raw: RawPool, path: string, sink: Sink): DnsConfig | undefined {
  const d = raw.dns;
  if (raw.members_from !== "dns") {
    if (d !== undefined) sink.errors.push(`${path}.dns: only allowed with members_from: dns`);
    return undefined;
  }
  if (raw.members !== undefined) {
    sink.errors.push(`${path}.members: not allowed with members_from: dns`);
  }
  if (d === undefined) {
    sink.errors.push(`${path}.dns: is required with members_from: dns`);
    return undefined;
  }
  const before = sink.errors.length;
  const type = d.type ?? "A";
  if (type === "SRV" && d.port !== undefined) {
    sink.errors.push(`${path}.dns.port: not used with type: SRV (answers carry the port)`);
  } else if (type !== "SRV" && d.port === undefined) {
    sink.errors.push(`${path}.dns.port: is required with type: ${type}`);
  }
  const min = d.min_refresh ?? 1_000;
  const max = d.max_refresh ?? 300_000;
  if (min > max) sink.errors.push(`${path}.dns.min_refresh: must not be above max_refresh`);
  const refresh = d.refresh ?? "ttl";
  if (refresh !== "ttl" && (refresh < min || refresh > max)) {
    sink.errors.push(`${path}.dns.refresh: must be between min_refresh and max_refresh`);
  }
  if (sink.errors.length !== before) return undefined;
  return {
    name: d.name.endsWith(".") ? d.name.slice(0, -1) : d.name,
    type,
    ...(d.port !== undefined ? { port: d.port } : {}),
    refresh,
    min_refresh: min,
    max_refresh: max,
    grace: d.grace ?? 60_000,
  };
}

/**
 * `by: cookie` names the cookie (default `SCALWS_AFFINITY`) and may set `cookie_max_age`
 * (whole seconds, default 0: a session cookie); `by: header` requires `name`; `by: client_ip`
 * takes neither and gets `name: ""`.
 */
function provisionHash(
  raw: NonNullable<RawPool["hash"]>,
  path: string,
  sink: Sink,
): HashConfig | undefined {
  const before = sink.errors.length;
  let name = raw.name ?? "";
  if (raw.by === "cookie") name ||= DEFAULT_AFFINITY_COOKIE;
  else if (raw.by === "header" && raw.name === undefined) {
    sink.errors.push(`${path}.name: is required with by: header`);
  } else if (raw.by === "client_ip" && raw.name !== undefined) {
    sink.errors.push(`${path}.name: not used with by: client_ip`);
  }
  const maxAge = raw.cookie_max_age ?? 0;
  if (raw.cookie_max_age !== undefined && raw.by !== "cookie") {
    sink.errors.push(`${path}.cookie_max_age: only allowed with by: cookie`);
  } else if (maxAge % 1000 !== 0) {
    sink.errors.push(`${path}.cookie_max_age: must be a whole number of seconds`);
  }
  if (sink.errors.length !== before) return undefined;
  return { by: raw.by, name, cookie_max_age: maxAge / 1000 };
}

/** Errors, warnings and where files are read. */
type Context = Sink & Files;

function provisionTenants(value: unknown, base: Path, draft: Draft, ctx: Context): void {
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

/** `value[key]` when `value` is a mapping; runtimes and routes are parsed from there. */
function field(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}

function listField(value: unknown, key: string): readonly unknown[] {
  const list = field(value, key);
  return Array.isArray(list) ? list : [];
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
    // Without a runtime of its own, a route with policies or conditions uses the application's.
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
      runtime: routeRuntime,
      ...(route.max_body !== undefined ? { max_body: route.max_body } : {}),
      ...(routeCache !== undefined ? { cache: routeCache } : {}),
      policies: routePolicies,
      inherit: route.inherit ?? true,
    };
    const routePath = formatPath(routeAt);
    for (const other of placed) {
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
        ...(raw.max_body !== undefined ? { max_body: raw.max_body } : {}),
        ...(raw.limit_req !== undefined ? { limit_req: limitReq(raw.limit_req) } : {}),
        ...(raw.deny_paths !== undefined ? { deny_paths: raw.deny_paths } : {}),
        ...(cache ? { cache } : {}),
        policies,
      }
      : undefined,
  };
}

/** Route keys that make sense with the application's runtime. */
const ROUTE_EXTRAS = ["policies", "inherit", "exact", "methods", "headers", "query"] as const;

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

/** `runtime: {...}` or the `proxy: {...}` shorthand, exactly one of them. */
function chooseRuntime(
  runtimeValue: unknown,
  proxyValue: unknown,
  at: Path,
  draft: Draft,
  sink: Sink,
): RuntimeConfig | undefined {
  const path = formatPath(at);
  if (runtimeValue !== undefined && proxyValue !== undefined) {
    sink.errors.push(`${path}: runtime and proxy are mutually exclusive`);
    return undefined;
  }
  if (proxyValue !== undefined) {
    const raw = parseUnit(proxyShorthandSchema, proxyValue, [...at, "proxy"], sink.errors);
    return raw && provisionProxy(raw, `${path}.proxy`, draft, sink);
  }
  if (runtimeValue === undefined) {
    sink.errors.push(`${path}.runtime: is required`);
    return undefined;
  }
  const runtime = parseUnit(runtimeSchema, runtimeValue, [...at, "runtime"], sink.errors);
  switch (runtime?.type) {
    case undefined:
      return undefined;
    case "proxy":
      return provisionProxy(runtime, `${path}.runtime`, draft, sink);
    case "respond":
      return {
        type: "respond",
        status: runtime.status ?? 200,
        body: runtime.body ?? "",
        headers: Object.fromEntries(Object.entries(runtime.headers ?? {})),
      };
    case "static":
      return { type: "static", root: runtime.root, index: runtime.index ?? "index.html" };
    case "php":
      return provisionPhp(runtime, `${path}.runtime`, draft);
    case "app":
    case "node":
    case "python":
    case "deno":
      return provisionApp(runtime, `${path}.runtime`, sink);
  }
}

/** Default FastCGI address of `type: php`: Debian's PHP-FPM socket. */
export const DEFAULT_FASTCGI = "unix:/run/php/php-fpm.sock";

/**
 * A PHP runtime: defaults `fastcgi: unix:/run/php/php-fpm.sock`, `index: index.php`,
 * `params: {}`, `connect_timeout: 5s`, `response_timeout: 60s`.
 */
function provisionPhp(raw: RawPhp, path: string, draft: Draft): PhpRuntime {
  let fastcgi: FastcgiTarget;
  const f = raw.fastcgi;
  if (f === undefined) {
    fastcgi = {
      kind: "address",
      address: { kind: "unix", path: "/run/php/php-fpm.sock", canonical: DEFAULT_FASTCGI },
    };
  } else if ("pool" in f) {
    fastcgi = { kind: "pool", pool: f.pool };
    draft.poolRefs.push({ pool: f.pool, path: `${path}.fastcgi.pool`, protocol: "fastcgi" });
  } else fastcgi = { kind: "address", address: f };
  return {
    type: "php",
    fastcgi,
    root: raw.root,
    index: raw.index ?? "index.php",
    ...(raw.front_controller !== undefined ? { front_controller: raw.front_controller } : {}),
    params: Object.fromEntries(Object.entries(raw.params ?? {})),
    connect_timeout: raw.connect_timeout ?? 5_000,
    response_timeout: raw.response_timeout ?? 60_000,
    ...(raw.status_path !== undefined ? { status_path: raw.status_path } : {}),
  };
}

/**
 * The system's Python (`/usr/bin/python3`, where Debian's python3-uvicorn and python3-gunicorn
 * live), else `python3` from `PATH`.
 */
function systemPython(): string {
  try {
    Deno.statSync("/usr/bin/python3");
    return "/usr/bin/python3";
  } catch {
    return "python3";
  }
}

/** Deno's own executable: `type: deno` workers run on the same runtime as scalwsd. */
function denoCommand(): string {
  try {
    const exe = Deno.execPath();
    return /deno$/.test(exe) ? exe : "deno";
  } catch {
    return "deno";
  }
}

/**
 * A supervised application; presets fill `command`: `node ENTRY` (default `server.js`) and
 * `deno run --allow-all ENTRY` (default `main.ts`) with `PORT={socket}`, `python3 -m uvicorn --uds {socket} APP` or `python3 -m gunicorn --bind
 * unix:{socket} APP`. Defaults: `workers: 1`, `max_restarts: 5` in `restart_window: 60s`,
 * `drain_timeout: 30s`, `ready_timeout: 30s`, `connect_timeout: 5s`, `response_timeout: 60s`,
 * `retries: 1`, `websocket: true`.
 */
function provisionApp(raw: RawAppRuntime, path: string, sink: Sink): AppRuntime | undefined {
  let command: string[];
  const env: Record<string, string> = {};
  switch (raw.type) {
    case "app":
      command = [...raw.command];
      break;
    case "node":
      command = ["node", raw.entry ?? "server.js"];
      env.PORT = "{socket}";
      break;
    case "deno":
      command = [denoCommand(), "run", "--allow-all", raw.entry ?? "main.ts"];
      env.PORT = "{socket}";
      break;
    case "python":
      command = (raw.server ?? "uvicorn") === "uvicorn"
        ? [systemPython(), "-m", "uvicorn", "--uds", "{socket}", raw.app]
        : [systemPython(), "-m", "gunicorn", "--bind", "unix:{socket}", "--workers", "1", raw.app];
      break;
  }
  Object.assign(env, raw.env ?? {});
  const all = [...command, ...Object.values(env)].join("\n");
  const usesPort = all.includes("{port}");
  if (usesPort && all.includes("{socket}")) {
    sink.errors.push(`${path}: use {socket} or {port}, not both`);
    return undefined;
  }
  if (!usesPort && !all.includes("{socket}")) {
    sink.errors.push(
      `${path}.command: must pass {socket} or {port} to the application (in command or env)`,
    );
    return undefined;
  }
  return {
    type: "app",
    preset: raw.type,
    command,
    workers: raw.workers ?? 1,
    ...(raw.cwd !== undefined ? { cwd: raw.cwd } : {}),
    env,
    listen: usesPort ? "port" : "socket",
    max_restarts: raw.max_restarts ?? 5,
    restart_window: raw.restart_window ?? 60_000,
    drain_timeout: raw.drain_timeout ?? 30_000,
    ready_timeout: raw.ready_timeout ?? 30_000,
    connect_timeout: raw.connect_timeout ?? 5_000,
    response_timeout: raw.response_timeout ?? 60_000,
    retries: raw.retries ?? 1,
    websocket: raw.websocket ?? true,
  };
}

/**
 * A proxy runtime: exactly one of `upstream` (a URL or `{pool}`) and `backends`; defaults
 * `preserve_host: false`, `connect_timeout: 5s`, `response_timeout: 60s`, `websocket: false`.
 * A backend's `weight` defaults to 1.
 */
function provisionProxy(
  raw: RawProxy,
  path: string,
  draft: Draft,
  sink: Sink,
): ProxyRuntime | undefined {
  const before = sink.errors.length;
  let target: ProxyTarget | undefined;
  if (raw.upstream !== undefined && raw.backends !== undefined) {
    sink.errors.push(`${path}: upstream and backends are mutually exclusive`);
  } else if (raw.upstream !== undefined) {
    if ("kind" in raw.upstream) {
      target = raw.upstream;
    } else {
      target = { kind: "pool", pool: raw.upstream.pool };
      draft.poolRefs.push({
        pool: raw.upstream.pool,
        path: `${path}.upstream.pool`,
        protocol: "http",
      });
    }
  } else if (raw.backends !== undefined) {
    target = provisionBackends(raw.backends, `${path}.backends`, draft, sink);
  } else {
    sink.errors.push(`${path}: upstream or backends is required`);
  }

  let tlsCaFile: string | undefined;
  if (raw.tls_ca_file !== undefined && target !== undefined) {
    if (target.kind === "address" && target.scheme === "https") tlsCaFile = raw.tls_ca_file;
    else if (target.kind === "address") {
      sink.errors.push(`${path}.tls_ca_file: only allowed with an https:// upstream`);
    } else {
      sink.errors.push(
        `${path}.tls_ca_file: not allowed on pool routes; set tls.ca_file on the pool`,
      );
    }
  }
  let client: ProxyRuntime["client"];
  if (raw.client !== undefined && target !== undefined) {
    if (target.kind === "address") client = { ...raw.client };
    else {
      sink.warnings.push(
        `${path}.client: ignored on pool routes; pools use server.upstream_client`,
      );
    }
  }
  if (target === undefined || sink.errors.length !== before) return undefined;
  return {
    type: "proxy",
    target,
    preserve_host: raw.preserve_host ?? false,
    connect_timeout: raw.connect_timeout ?? 5_000,
    response_timeout: raw.response_timeout ?? 60_000,
    websocket: raw.websocket ?? false,
    ...(tlsCaFile !== undefined ? { tls_ca_file: tlsCaFile } : {}),
    ...(client !== undefined ? { client } : {}),
  };
}

/** 1..64 entries, each a `pool` or a `status`, at least one weight above 0, no repeats. */
function provisionBackends(
  raw: NonNullable<RawProxy["backends"]>,
  path: string,
  draft: Draft,
  sink: Sink,
): ProxyTarget {
  const backends: BackendEntry[] = [];
  const seen = new Set<string | number>();
  let positive = false;
  for (let i = 0; i < raw.length; i++) {
    const entry = raw[i];
    const at = `${path}[${i}]`;
    const weight = entry.weight ?? 1;
    if (weight > 0) positive = true;
    if ((entry.pool === undefined) === (entry.status === undefined)) {
      sink.errors.push(`${at}: exactly one of pool and status is required`);
    } else if (entry.pool !== undefined) {
      if (seen.has(entry.pool)) sink.errors.push(`${at}.pool: duplicate pool "${entry.pool}"`);
      seen.add(entry.pool);
      draft.poolRefs.push({ pool: entry.pool, path: `${at}.pool`, protocol: "http" });
      backends.push({ pool: entry.pool, weight });
    } else if (entry.status !== undefined) {
      if (seen.has(entry.status)) {
        sink.errors.push(`${at}.status: duplicate status ${entry.status}`);
      }
      seen.add(entry.status);
      backends.push({ status: entry.status, weight });
    }
  }
  if (!positive) sink.errors.push(`${path}: at least one backend needs a weight above 0`);
  return { kind: "backends", backends };
}
