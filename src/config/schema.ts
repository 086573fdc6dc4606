/**
 * The zod schema of the YAML document, one schema per unit (server, pool, tenant,
 * application) so that a broken unit does not hide the errors of the others. Objects are
 * strict: an unknown key is an error. Leaf values (durations, sizes, addresses, names) are
 * parsed here, so their errors come out in the same pass; defaults are applied later, in
 * `provision.ts`. Pool members are checked by `validateMembers`, not by zod, which would
 * take far longer on a 10,000-member pool.
 */
import { z } from "zod";
import {
  parseListenAddress,
  parseMemberAddress,
  parseResolverAddress,
  parseUpstreamUrl,
} from "./address.ts";
import { formatDuration, parseDuration } from "./duration.ts";
import { ValueError } from "./errors.ts";
import { cidrError, parseIP, parseIPv4 } from "../net/mod.ts";
import { parseSize } from "./size.ts";
import { FOLLOW_SYMLINKS } from "./types.ts";
import {
  domainError,
  headerValueError,
  hostnameError,
  nameError,
  normaliseRoutePath,
  tokenError,
} from "./syntax.ts";

/** A value checked by a function that throws `ValueError`; `undefined` is "is required". */
export function leaf<T>(parse: (value: unknown) => T) {
  return z.unknown().transform((value, ctx): T => {
    if (value === undefined) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: "is required" });
      return z.NEVER;
    }
    try {
      return parse(value);
    } catch (e) {
      if (!(e instanceof ValueError)) throw e;
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: e.message });
      return z.NEVER;
    }
  });
}

export function string(value: unknown): string {
  if (typeof value !== "string") throw new ValueError("must be a string");
  return value;
}

/** A non-empty string. */
export function text() {
  return leaf((v) => {
    const s = string(v);
    if (s === "") throw new ValueError("must not be empty");
    return s;
  });
}

export function flag() {
  return leaf((v) => {
    if (typeof v !== "boolean") throw new ValueError("must be true or false");
    return v;
  });
}

/** An integer in `min..max` (`max` may be Infinity). */
export function int(min: number, max: number) {
  return leaf((v) => {
    if (typeof v !== "number" || !Number.isInteger(v)) throw new ValueError("must be an integer");
    if (v < min || v > max) {
      throw new ValueError(
        max === Infinity ? `must be at least ${min}` : `must be between ${min} and ${max}`,
      );
    }
    return v;
  });
}

export function oneOf<const T extends string>(values: readonly T[]) {
  return leaf((v): T => {
    if (typeof v === "string" && (values as readonly string[]).includes(v)) return v as T;
    const shown = typeof v === "string" ? `"${v}"` : String(v);
    throw new ValueError(`invalid value ${shown}; must be one of ${values.join(", ")}`);
  });
}

/** A duration in milliseconds (see `parseDuration`), `min..max` inclusive. */
export function duration(min = 0, max = Infinity) {
  return leaf((v) => {
    if (typeof v !== "string" && typeof v !== "number") {
      throw new ValueError('must be a duration such as "10s"');
    }
    const ms = parseDuration(v);
    if (ms < min || ms > max) {
      throw new ValueError(
        max !== Infinity
          ? `must be between ${formatDuration(min)} and ${formatDuration(max)}`
          : min === 1
          ? "must be greater than 0"
          : `must be at least ${formatDuration(min)}`,
      );
    }
    return ms;
  });
}

/** A size in bytes, at least 1 (see `parseSize`); `max` is named in its error as `maxText`. */
export function size(max = Infinity, maxText = "") {
  return leaf((v) => {
    if (typeof v !== "string" && typeof v !== "number") {
      throw new ValueError('must be a size such as "10MiB"');
    }
    const bytes = parseSize(v);
    if (bytes < 1) throw new ValueError("must be at least 1 byte");
    if (bytes > max) throw new ValueError(`must be at most ${maxText}`);
    return bytes;
  });
}

/** Requests per second from `10r/s`, `600r/m` or a plain number of requests per second. */
function rate() {
  return leaf((v) => {
    let perSecond: number;
    if (typeof v === "number") perSecond = v;
    else if (typeof v === "string") {
      const m = /^([0-9]{1,9}(?:\.[0-9]{1,6})?)r\/([sm])$/.exec(v);
      if (m === null) {
        throw new ValueError(
          `invalid rate "${v}": use requests per second or minute, such as "10r/s"`,
        );
      }
      perSecond = Number(m[1]) / (m[2] === "m" ? 60 : 1);
    } else throw new ValueError('must be a rate such as "10r/s"');
    if (!(perSecond > 0) || !Number.isFinite(perSecond)) {
      throw new ValueError("must be greater than 0");
    }
    return perSecond;
  });
}

export function checked(check: (s: string) => string | undefined, lower = false) {
  return leaf((v) => {
    const s = lower ? string(v).toLowerCase() : string(v);
    const error = check(s);
    if (error !== undefined) throw new ValueError(error);
    return s;
  });
}

/** Pool, tenant, application and listener names (`NAME_PATTERN`). */
const name = () => checked(nameError);
/** Cookie and header names. */
export const token = () => checked(tokenError);
const domain = () => checked(domainError, true);
/** An application's domain: also `**.example.com`, any number of labels (Gateway API wildcards). */
const appDomain = () =>
  checked((s) => (s.startsWith("**.") ? domainError(s.slice(3)) : domainError(s)), true);

function listenAddress() {
  return leaf((v) => {
    const address = string(v);
    return { address, ...parseListenAddress(address) };
  });
}

function resolverAddress() {
  return leaf((v) => {
    const address = string(v);
    return { address, ...parseResolverAddress(address) };
  });
}

const DNS_LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** A DNS name to resolve: letters, digits, `-` and `_` (SRV names), one final dot allowed. */
const dnsName = () =>
  checked((s) => {
    const n = s.endsWith(".") ? s.slice(0, -1) : s;
    if (n.length === 0 || n.length > 253) return "must be a DNS name of 1 to 253 characters";
    for (const label of n.split(".")) {
      if (!DNS_LABEL.test(label)) return `invalid DNS name "${s}"`;
    }
    return undefined;
  }, true);

/** `dns.refresh`: `ttl` (follow the answer's TTL) or a duration. */
function refresh() {
  return leaf((v): "ttl" | number => {
    if (v === "ttl") return "ttl";
    if (typeof v !== "string" && typeof v !== "number") {
      throw new ValueError('must be "ttl" or a duration such as "30s"');
    }
    const ms = parseDuration(v);
    if (ms < 1) throw new ValueError("must be greater than 0");
    return ms;
  });
}

export function routePath() {
  return leaf((v) => {
    const result = normaliseRoutePath(string(v));
    if (result.error !== undefined) throw new ValueError(result.error);
    return result.path as string;
  });
}

/** A health check path: starts with `/`, printable, no spaces. */
const probePath = () =>
  checked((s) =>
    /^\/[\x21-\x7e]*$/.test(s) ? undefined : `invalid path "${s}": must start with "/"`
  );

/** A TLS server name: a host name or an IP address. */
const serverName = () =>
  checked((s) => (parseIP(s) !== undefined ? undefined : hostnameError(s)), true);

const fileName = () =>
  checked((s) => s.includes("/") || s === "." || s === ".." ? "must be a file name" : undefined);

const headerName = () =>
  checked((s) => {
    const lower = s.toLowerCase();
    if (lower === "content-length" || lower === "transfer-encoding") {
      return `header "${s}" is set by scalwsd`;
    }
    return tokenError(s);
  });

export const headerValue = () => checked(headerValueError);

// ---- server ----

const certificateSchema = z.object({
  cert: text(),
  key: text(),
  domains: z.array(domain()).min(1, "at least one domain is required").optional(),
}).strict();

/** A domain HTTP-01 can validate: no wildcard (that needs DNS-01). */
const acmeDomain = () =>
  checked(
    (s) =>
      s.startsWith("*.")
        ? `"${s}": a wildcard needs a DNS-01 challenge, which scalwsd does not do`
        : parseIPv4(s) !== undefined
        ? `"${s}" is an IP address: tls.acme orders certificates for DNS names only`
        : domainError(s),
    true,
  );

/** `tls.acme`: certificates ordered from an ACME server (RFC 8555) with HTTP-01. */
const acmeSchema = z.object({
  directory: checked((s) => {
    if (!URL.canParse(s)) return `invalid URL "${s}"`;
    return new URL(s).protocol === "https:" ? undefined : `"${s}" must be an https:// URL`;
  }),
  email: checked((s) =>
    /^[^\s@<>:,;"]+@[^\s@<>:,;"]+$/.test(s) ? undefined : `invalid email address "${s}"`
  ).optional(),
  domains: z.array(acmeDomain()).min(1, "at least one domain is required").superRefine(
    (domains, ctx) => {
      domains.forEach((d, i) => {
        if (typeof d === "string" && domains.indexOf(d) !== i) {
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            path: [i],
            message: `duplicate domain "${d}"`,
          });
        }
      });
    },
  ),
  ca_file: text().optional(),
}).strict();

const listenerSchema = z.object({
  name: name(),
  address: listenAddress(),
  redirect: z.unknown().optional(),
  tls: z.object({
    certificates: z.array(certificateSchema).min(1, "at least one certificate is required")
      .optional(),
    acme: acmeSchema.optional(),
    handshake_timeout: duration(1).optional(),
    strict_sni: flag().optional(),
    unknown_sni: oneOf(["first", "refuse"]).optional(),
  }).strict().superRefine((tls, ctx) => {
    if (tls.certificates === undefined && tls.acme === undefined) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        path: ["certificates"],
        message: "is required unless acme is set",
      });
    }
  }).optional(),
}).strict();

/** `server.tracing.endpoint`: an `http://` or `https://` URL, taken as it is (path included). */
function otlpEndpoint(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ValueError(`invalid endpoint "${text}": must be an http:// or https:// URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ValueError(`invalid endpoint "${text}": must be an http:// or https:// URL`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new ValueError(`invalid endpoint "${text}": user information is not allowed`);
  }
  return text;
}

/** `limit_req` of the server or an application. */
const limitReqSchema = z.object({ rate: rate(), burst: int(0, 1_000_000).optional() }).strict();

const denyPaths = () => z.array(routePath());

/** `server`: listeners, admin, metrics, proxies, logging and limits. */
export const serverSchema = z.object({
  listeners: z.array(listenerSchema).optional().superRefine((listeners, ctx) => {
    if (listeners === undefined || listeners.length === 0) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: "at least one listener is required" });
    }
  }),
  admin: z.object({
    socket: text().optional(),
    remote: z.object({
      address: listenAddress(),
      tls: z.object({ cert: text(), key: text(), client_ca: text() }).strict(),
    }).strict().optional(),
    http: z.object({ address: listenAddress(), writes: z.boolean().optional() }).strict()
      .optional(),
  }).strict().optional(),
  metrics: z.object({ address: listenAddress().optional() }).strict().optional(),
  trusted_proxies: z.array(checked(cidrError)).optional(),
  request_id: z.object({ header: headerName().optional() }).strict().optional(),
  access_log: text().optional(),
  default_host: checked((s) => (s === "" ? "must not be empty" : undefined), true).optional(),
  max_body: size().optional(),
  affinity_key_file: text().optional(),
  state_dir: text().optional(),
  resolver: resolverAddress().optional(),
  listener_mode: oneOf(["shared", "reuseport", "inherited"]).optional(),
  drain_timeout: duration(1).optional(),
  upstream_client: z.object({
    keepalive: int(0, 1024).optional(),
    idle_timeout: duration(1).optional(),
  }).strict().optional(),
  limits: z.object({
    header_read_timeout: duration().optional(),
    idle_timeout: duration().optional(),
    body_read_timeout: duration().optional(),
    max_header_size: size(65_536, "64KiB").optional(),
    max_header_count: int(1, 128).optional(),
    max_uri_length: size(65_536, "64KiB").optional(),
    max_connections: int(0, 10_000_000).optional(),
    // Deno 2.9.6's HTTP/2 server (hyper) advertises and enforces 200 itself.
    max_concurrent_streams: int(1, 200).optional(),
    max_resets_per_second: int(0, 1_000_000).optional(),
  }).strict().optional(),
  limit_req: limitReqSchema.optional(),
  limit_conn: int(1, 1_000_000).optional(),
  limits_store: z.object({
    redis: z.object({
      address: leaf((v) => parseMemberAddress(string(v))),
      key_prefix: text().optional(),
      timeout: duration(1, 10_000).optional(),
    }).strict(),
    on_error: oneOf(["allow", "local", "deny"]).optional(),
  }).strict().optional(),
  tracing: z.object({
    endpoint: leaf((v) => otlpEndpoint(string(v))),
    sample_ratio: leaf((v) => {
      if (typeof v !== "number" || !(v >= 0 && v <= 1)) {
        throw new ValueError("must be a number between 0 and 1");
      }
      return v;
    }).optional(),
    service_name: text().optional(),
    headers: z.record(headerName(), headerValue()).optional(),
    trust_client: flag().optional(),
    queue_size: int(1, 1_000_000).optional(),
  }).strict().optional(),
  deny_paths: denyPaths().optional(),
  cache: z.object({
    max_size: size().optional(),
    heuristic_max: duration().optional(),
    path: text().optional(),
    disk_max_size: size().optional(),
  }).strict().optional(),
  include: z.array(text()).optional(),
}).strict();

export type RawServer = z.output<typeof serverSchema>;

// ---- upstreams ----

/** One pool of `upstreams`; `members` is left to `validateMembers`. */
export const poolSchema = z.object({
  members: z.unknown().optional(),
  members_from: oneOf(["file", "api", "dns"]).optional(),
  dns: z.object({
    name: dnsName(),
    type: oneOf(["A", "AAAA", "SRV"]).optional(),
    port: int(1, 65535).optional(),
    refresh: refresh().optional(),
    min_refresh: duration(1).optional(),
    max_refresh: duration(1).optional(),
    grace: duration().optional(),
  }).strict().optional(),
  balance: oneOf(["round_robin", "least_conn", "hash", "failover"]).optional(),
  hash: z.object({
    by: oneOf(["cookie", "header", "client_ip"]),
    name: token().optional(),
    cookie_max_age: duration().optional(),
  }).strict().optional(),
  passive_health: z.object({
    failures: int(0, 100).optional(),
    cooldown: duration(1, 3_600_000).optional(),
  }).strict().optional(),
  retries: int(0, 5).optional(),
  keepalive: int(0, 1024).optional(),
  protocol: oneOf(["http", "fastcgi"]).optional(),
  max_queue: int(0, 1_000_000).optional(),
  scheme: oneOf(["http", "https"]).optional(),
  tls: z.object({ ca_file: text().optional(), server_name: serverName().optional() }).strict()
    .optional(),
  health_check: z.object({
    path: probePath().optional(),
    interval: duration(1).optional(),
    timeout: duration(1).optional(),
    rise: int(1, Infinity).optional(),
    fall: int(1, Infinity).optional(),
  }).strict().optional(),
  sticky: z.object({ ttl: duration(1), cookie: token().optional() }).strict().optional(),
}).strict();

export type RawPool = z.output<typeof poolSchema>;

// ---- runtimes ----

const poolRef = z.object({ pool: name() }).strict();

const upstreamUrl = z.string().transform((value, ctx) => {
  try {
    return parseUpstreamUrl(value);
  } catch (e) {
    if (!(e instanceof ValueError)) throw e;
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: e.message });
    return z.NEVER;
  }
});

const backendSchema = z.object({
  pool: name().optional(),
  status: int(500, 599).optional(),
  weight: int(0, 1000).optional(),
}).strict();

const proxyFields = {
  upstream: z.union([poolRef, upstreamUrl], {
    errorMap: (issue, ctx) => ({
      message: issue.code === "invalid_union"
        ? 'must be a URL ("http://host:port") or {pool: NAME}'
        : ctx.defaultError,
    }),
  }).optional(),
  backends: z.array(backendSchema).superRefine((backends, ctx) => {
    if (backends.length < 1 || backends.length > 64) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: "must have between 1 and 64 entries" });
    }
  }).optional(),
  preserve_host: flag().optional(),
  connect_timeout: duration(1).optional(),
  response_timeout: duration(1).optional(),
  websocket: flag().optional(),
  tls_ca_file: text().optional(),
  client: z.object({
    keepalive: int(0, 1024).optional(),
    idle_timeout: duration(1).optional(),
  }).strict().optional(),
};

const fastcgiAddress = z.string().transform((value, ctx) => {
  try {
    return parseMemberAddress(value);
  } catch (e) {
    if (!(e instanceof ValueError)) throw e;
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: e.message });
    return z.NEVER;
  }
});

/**
 * `fastcgi:` as a mapping: `{pool: NAME}`, or `{address, max_conns, max_queue}` (one address
 * with its connection limit and queue).
 */
const fastcgiTarget = z.object({
  pool: name().optional(),
  address: fastcgiAddress.optional(),
  max_conns: int(1, 10_000).optional(),
  max_queue: int(0, 1_000_000).optional(),
}).strict().superRefine((t, ctx) => {
  const issue = (message: string, path: string[] = []) =>
    ctx.addIssue({ code: z.ZodIssueCode.custom, message, path });
  if (t.pool !== undefined) {
    if (t.address !== undefined) issue("pool and address are mutually exclusive");
    if (t.max_conns !== undefined) {
      issue("only with address (set max_conns on the pool's members)", ["max_conns"]);
    }
    if (t.max_queue !== undefined) {
      issue("only with address (set max_queue on the pool)", ["max_queue"]);
    }
  } else if (t.address === undefined) issue("must have address or pool");
});

/** A FastCGI param name: letters, digits and `_`. */
const paramName = () =>
  checked((s) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(s) ? undefined : `invalid param name "${s}"`);

/** `follow_symlinks` and `allowed_roots` of `static` and `php`. */
const symlinkFields = {
  follow_symlinks: oneOf(FOLLOW_SYMLINKS).optional(),
  allowed_roots: z.array(
    checked((s) =>
      s.startsWith("/") && !s.includes("\0") ? undefined : `invalid path "${s}": must be absolute`
    ),
  ).optional(),
};

/** Keys every supervised application runtime (`app`, `node`, `python`, `deno`) takes. */
const appFields = {
  workers: int(1, 256).optional(),
  cwd: text().optional(),
  env: z.record(
    checked((s) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(s) ? undefined : `invalid variable "${s}"`),
    leaf(string),
  ).optional(),
  max_restarts: int(0, 1000).optional(),
  restart_window: duration(1).optional(),
  drain_timeout: duration().optional(),
  ready_timeout: duration(1).optional(),
  connect_timeout: duration(1).optional(),
  response_timeout: duration(1).optional(),
  retries: int(0, 5).optional(),
  websocket: flag().optional(),
};

/** The `proxy:` shorthand of applications and routes: a proxy runtime without `type`. */
export const proxyShorthandSchema = z.object(proxyFields).strict();

/** `runtime` of applications and routes, by `type`. */
export const runtimeSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("proxy"), ...proxyFields }).strict(),
  z.object({
    type: z.literal("respond"),
    status: int(100, 599).optional(),
    body: leaf(string).optional(),
    headers: z.record(headerName(), headerValue()).optional(),
  }).strict(),
  z.object({
    type: z.literal("static"),
    root: text(),
    index: fileName().optional(),
    ...symlinkFields,
  }).strict(),
  z.object({
    type: z.literal("php"),
    fastcgi: z.union([fastcgiTarget, fastcgiAddress], {
      errorMap: (issue, ctx) => ({
        message: issue.code === "invalid_union"
          ? 'must be an address ("unix:/path" or "host:port"), {address, max_conns, max_queue} or {pool: NAME}'
          : ctx.defaultError,
      }),
    }).optional(),
    root: text(),
    index: fileName().optional(),
    front_controller: probePath().optional(),
    ...symlinkFields,
    params: z.record(paramName(), leaf(string)).optional(),
    connect_timeout: duration(1).optional(),
    response_timeout: duration(1).optional(),
    status_path: probePath().optional(),
  }).strict(),
  z.object({
    type: z.literal("app"),
    command: z.array(text()).min(1, "must not be empty"),
    ...appFields,
  })
    .strict(),
  z.object({ type: z.literal("node"), entry: text().optional(), ...appFields }).strict(),
  z.object({
    type: z.literal("python"),
    app: checked((s) =>
      /^[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_.()]*$/.test(s)
        ? undefined
        : `invalid app "${s}": use "module:attribute"`
    ),
    server: oneOf(["uvicorn", "gunicorn"]).optional(),
    ...appFields,
  }).strict(),
  z.object({ type: z.literal("deno"), entry: text().optional(), ...appFields }).strict(),
]);

export type RawProxy = z.output<typeof proxyShorthandSchema>;
export type RawRuntime = z.output<typeof runtimeSchema>;

// ---- cache ----

/** `cache:` of an application or a route (a route may also say `cache: false`). */
export const cacheSchema = z.object({
  stale_while_revalidate: duration().optional(),
  stale_if_error: duration().optional(),
  stale_if_disconnected: duration().optional(),
  max_object_size: size().optional(),
  key_headers: z.array(token()).optional(),
  ignore_query: flag().optional(),
  store_set_cookie: leaf((v): boolean | "keep" => {
    if (typeof v === "boolean" || v === "keep") return v;
    throw new ValueError("must be true, false or keep");
  }).optional(),
  targeted_field: token().optional(),
}).strict();

export type RawCache = z.output<typeof cacheSchema>;

// ---- tenants ----
// Applications, routes and runtimes are parsed one by one, so that an error in one of them
// does not keep the rules of the others from being checked.

/** A route; its `runtime` or `proxy` is parsed on its own. */
export const routeSchema = z.object({
  path: routePath(),
  exact: flag().optional(),
  methods: z.array(
    checked((s) =>
      /^[A-Z]+$/.test(s)
        ? undefined
        : /^[A-Za-z]+$/.test(s)
        ? `invalid method "${s}": methods are upper case (${s.toUpperCase()})`
        : `invalid method "${s}"`
    ),
  ).min(1, "at least one method is required").optional(),
  headers: z.record(token(), headerValue()).optional(),
  query: z.record(
    leaf((v) => {
      const s = string(v);
      if (s === "") throw new ValueError("must not be empty");
      return s;
    }),
    leaf(string),
  ).optional(),
  scheme: z.enum(["http", "https"]).optional(),
  runtime: z.unknown().optional(),
  proxy: z.unknown().optional(),
  max_body: size().optional(),
  cache: z.unknown().optional(),
  policies: z.array(z.unknown()).optional(),
  inherit: flag().optional(),
}).strict();

/** An application; its runtime and each route are parsed on their own. */
export const applicationSchema = z.object({
  name: name(),
  domains: z.array(appDomain()).min(1, "at least one domain is required"),
  runtime: z.unknown().optional(),
  proxy: z.unknown().optional(),
  routes: z.array(z.unknown()).optional(),
  route_order: z.enum(["specific", "listed"]).optional(),
  max_body: size().optional(),
  limit_req: limitReqSchema.optional(),
  deny_paths: denyPaths().optional(),
  cache: z.unknown().optional(),
  policies: z.array(z.unknown()).optional(),
}).strict();

/** A tenant; its applications are parsed one by one. */
export const tenantSchema = z.object({
  name: name(),
  applications: z.array(z.unknown()),
}).strict();
