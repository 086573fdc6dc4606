/**
 * The provisioned configuration: what `loadConfig` returns after YAML -> zod -> provision ->
 * validate. Every object is frozen. Keys keep the YAML spelling (snake_case) so that an error
 * path and the field it names read the same. Durations are milliseconds, sizes are bytes.
 */

import type { MemberAddress } from "../net/mod.ts";

/** A parsed `ip:port`, `[ipv6]:port` or `host:port` listen or member address. */
export interface HostPort {
  /** Host as written without brackets, lower-cased (`127.0.0.1`, `::1`, `api-1.internal`). */
  readonly hostname: string;
  readonly port: number;
}

export interface MemberConfig {
  /** Canonical form: `192.0.2.5:8080`, `[2001:db8::5]:8080`, `host:8080`, `unix:/path`. */
  readonly address: string;
  readonly parsed: MemberAddress;
  /** 1..1000, default 1. */
  readonly weight: number;
  /** FastCGI pools only: connections at once, 1..10,000; absent: as `fastcgi` (see there). */
  readonly max_conns?: number;
}

export interface HashConfig {
  readonly by: "cookie" | "header" | "client_ip";
  /** Cookie or header name. Cookie default `SCALWS_AFFINITY`; required for `header`. */
  readonly name: string;
  /** Seconds; 0 (default) makes a session cookie. */
  readonly cookie_max_age: number;
}

export interface HealthCheckConfig {
  /** HTTP GET probe path; absent means a TCP connect probe. */
  readonly path?: string;
  /** Default 5 s. */
  readonly interval: number;
  /** Default 3 s. */
  readonly timeout: number;
  /** Consecutive passes to return a member, default 2. */
  readonly rise: number;
  /** Consecutive failures to take a member out, default 2. */
  readonly fall: number;
}

export interface StickyConfig {
  /** Milliseconds; required. */
  readonly ttl: number;
  /** Cookie name, default `SCALWS_STICKY_<pool>`. */
  readonly cookie: string;
}

/** `upstreams.NAME.dns`: where a `members_from: dns` pool takes its members. */
export interface DnsConfig {
  /** Lower-case, without a final dot. */
  readonly name: string;
  /** Default `A`. */
  readonly type: "A" | "AAAA" | "SRV";
  /** Member port for A and AAAA answers (required there); SRV answers carry their own. */
  readonly port?: number;
  /** `ttl` (default): the answer's smallest TTL; or a fixed interval in ms. */
  readonly refresh: "ttl" | number;
  /** Bounds of the interval between resolutions in ms; defaults 1 s and 5 min. */
  readonly min_refresh: number;
  readonly max_refresh: number;
  /** How long NXDOMAIN must last before the pool is emptied, in ms; default 60 s. */
  readonly grace: number;
}

export interface PoolConfig {
  readonly name: string;
  readonly members: readonly MemberConfig[];
  /** `file` (default), `api` (set by `PUT`) or `dns` (resolved, see `dns`). */
  readonly members_from: "file" | "api" | "dns";
  /** Present exactly with `members_from: dns`. */
  readonly dns?: DnsConfig;
  /** `round_robin` (default), `least_conn`, `hash` or `failover`. */
  readonly balance: "round_robin" | "least_conn" | "hash" | "failover";
  /** Present only with `balance: hash`. */
  readonly hash?: HashConfig;
  readonly passive_health: {
    /** Consecutive failures before ejection; default 3, 0 turns it off, at most 100. */
    readonly failures: number;
    /** Ejection time in ms; default 10 s, 1 ms..1 h. */
    readonly cooldown: number;
  };
  /** Further attempts on other members; default 1, 0..5. */
  readonly retries: number;
  /** Idle connections kept per member; default 32, at most 1024. */
  readonly keepalive: number;
  /** `http` (default) or `fastcgi` (members are FastCGI servers, for `type: php`). */
  readonly protocol: "http" | "fastcgi";
  /** `protocol: fastcgi` only: requests that may wait per member; absent: 256. */
  readonly max_queue?: number;
  /** `http` (default) or `https`. */
  readonly scheme: "http" | "https";
  /** Only with `scheme: https`. */
  readonly tls?: { readonly ca_file?: string; readonly server_name?: string };
  /** Active health checks; absent (default) means off. */
  readonly health_check?: HealthCheckConfig;
  readonly sticky?: StickyConfig;
}

/** A single-address proxy target (`http://h:p`, `https://h:p`, `unix:/path`). */
export interface AddressTarget {
  readonly kind: "address";
  readonly url: string;
  readonly scheme: "http" | "https";
  readonly address: MemberAddress;
  /** The value sent as Host when `preserve_host` is false: `host` or `host:port`. */
  readonly authority: string;
}

export interface BackendEntry {
  readonly pool?: string;
  /** 500..599: answered by scalwsd without contacting a pool. */
  readonly status?: number;
  /** 0..1000. */
  readonly weight: number;
}

export type ProxyTarget =
  | AddressTarget
  | { readonly kind: "pool"; readonly pool: string }
  | { readonly kind: "backends"; readonly backends: readonly BackendEntry[] };

export interface ProxyRuntime {
  readonly type: "proxy";
  readonly target: ProxyTarget;
  /** Default false: Host is rewritten to the member's authority. */
  readonly preserve_host: boolean;
  /** Per attempt, default 5 s. */
  readonly connect_timeout: number;
  /** Per attempt, time to the response head, default 60 s. */
  readonly response_timeout: number;
  /** Default false. */
  readonly websocket: boolean;
  /** Only with a single `https://` upstream. */
  readonly tls_ca_file?: string;
  /** Per-route client settings for a single address; ignored (with a warning) on pool routes. */
  readonly client?: { readonly keepalive?: number; readonly idle_timeout?: number };
}

export interface RespondRuntime {
  readonly type: "respond";
  /** Default 200. */
  readonly status: number;
  /** Default empty. */
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** `follow_symlinks` of `static` and `php` runtimes (see `src/handlers/symlinks.ts`). */
export type FollowSymlinks = "inside_root" | "owner_match" | "always";

export const FOLLOW_SYMLINKS: readonly FollowSymlinks[] = ["inside_root", "owner_match", "always"];

export interface StaticRuntime {
  readonly type: "static";
  readonly root: string;
  /** Default `index.html`. */
  readonly index: string;
  /** Default `inside_root`: a symlink is followed only when it ends under the root. */
  readonly follow_symlinks: FollowSymlinks;
  /** Trees reached through symlinks whatever `follow_symlinks` says; default none. */
  readonly allowed_roots: readonly string[];
}

/** Where a PHP runtime sends its FastCGI requests. */
export type FastcgiTarget =
  | {
    readonly kind: "address";
    readonly address: MemberAddress;
    /** Connections at once; 0 (default): PHP-FPM's `pm.max_children` via `status_path`, else 8. */
    readonly max_conns: number;
    /** Requests that may wait for a connection; default 256; past it `503`. */
    readonly max_queue: number;
  }
  | { readonly kind: "pool"; readonly pool: string };

export interface PhpRuntime {
  readonly type: "php";
  /** Default `unix:/run/php/php-fpm.sock`. */
  readonly fastcgi: FastcgiTarget;
  /** Document root; required. */
  readonly root: string;
  /** Default `index.php`. */
  readonly index: string;
  /** Script for paths that name no file (`/index.php`); absent: 404. */
  readonly front_controller?: string;
  /** Default `inside_root`, as `static`'s. */
  readonly follow_symlinks: FollowSymlinks;
  /** Default none, as `static`'s. */
  readonly allowed_roots: readonly string[];
  /** Extra FastCGI params, added last (they win). */
  readonly params: Readonly<Record<string, string>>;
  /** Default 5 s. */
  readonly connect_timeout: number;
  /** Default 60 s. */
  readonly response_timeout: number;
  /** PHP-FPM's `pm.status_path`, read by the controller's classifier; absent: not read. */
  readonly status_path?: string;
}

/**
 * A supervised application (`type: app`, or the presets `node`, `python`, `deno`, which fill
 * `command`). `{socket}` and `{port}` in `command` and `env` are replaced per worker.
 */
export interface AppRuntime {
  readonly type: "app";
  readonly preset: "app" | "node" | "python" | "deno";
  readonly command: readonly string[];
  /** Default 1. */
  readonly workers: number;
  readonly cwd?: string;
  readonly env: Readonly<Record<string, string>>;
  /** `port` when `{port}` appears in `command` or `env`, else `socket`. */
  readonly listen: "socket" | "port";
  /** Restarts allowed in `restart_window` before the worker is given up; default 5. */
  readonly max_restarts: number;
  /** Default 60 s. */
  readonly restart_window: number;
  /** How long an old worker may finish its requests in a rolling reload; default 30 s. */
  readonly drain_timeout: number;
  /** How long a new worker may take to accept connections; default 30 s. */
  readonly ready_timeout: number;
  /** Default 5 s. */
  readonly connect_timeout: number;
  /** Default 60 s. */
  readonly response_timeout: number;
  /** Further attempts on other workers (idempotent requests); default 1. */
  readonly retries: number;
  /** Default true. */
  readonly websocket: boolean;
}

export type RuntimeConfig =
  | ProxyRuntime
  | RespondRuntime
  | StaticRuntime
  | PhpRuntime
  | AppRuntime;

/** `cache:` of an application or route: the response cache is on there. */
export interface CacheConfig {
  /** Cap on what a member's `stale-while-revalidate` may ask, ms; default 60 s. */
  readonly stale_while_revalidate: number;
  /** Cap on what a member's `stale-if-error` may ask, ms; default 0 (off). */
  readonly stale_if_error: number;
  /**
   * How long past its freshness a stored answer may be served when the member cannot be reached
   * (RFC 9111 4.2.4: connect failure, connection closed or reset without an answer, timeout),
   * whatever its `stale-if-error`; never with `must-revalidate`, `proxy-revalidate`, `s-maxage`
   * or `no-cache`. ms, default 0 (off).
   */
  readonly stale_if_disconnected: number;
  /** Larger answers stream through unstored; bytes, default 8 MiB. */
  readonly max_object_size: number;
  /** Request headers (lower-case) added to the key; default none. */
  readonly key_headers: readonly string[];
  /** Default false: the query string is part of the key. */
  readonly ignore_query: boolean;
  /**
   * Default false: answers with `Set-Cookie` are not stored; true: stored without it (only the
   * first client gets the cookie); `keep`: stored with it and every hit carries it (RFC 9111 7.3).
   */
  readonly store_set_cookie: boolean | "keep";
  /**
   * Targeted cache-control field (RFC 9213, lower-case) that replaces `Cache-Control` and
   * `Expires` for the cache's own decisions when valid; default `cdn-cache-control`.
   */
  readonly targeted_field: string;
}

export interface RouteConfig {
  /** Normalised, starts with `/`, no trailing slash except `/` itself. */
  readonly path: string;
  /** Default false: the path is a segment-aligned prefix; true: only that path. */
  readonly exact: boolean;
  /** Upper-case methods this route takes (others get 405 with `Allow`); absent: all. */
  readonly methods?: readonly string[];
  /** Request headers that must be present with exactly these values (names lower-cased). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Query parameters that must be present with exactly these (decoded) values. */
  readonly query?: Readonly<Record<string, string>>;
  /** `http`: only plain requests; `https`: only requests over TLS; absent: both. */
  readonly scheme?: "http" | "https";
  /** The route's own runtime; the application's (the same object) when the route sets none. */
  readonly runtime: RuntimeConfig;
  /** Bytes; absent means the global limit. */
  readonly max_body?: number;
  /** Replaces the application's `cache`; `false` turns it off on this route. */
  readonly cache?: CacheConfig | false;
  /** Run after the application's policies (unless `inherit` is false), before the handler. */
  readonly policies: readonly PolicyConfig[];
  /** Default true: the application's policies run first. */
  readonly inherit: boolean;
}

/** Header edits of a `headers` policy: names lower-cased, values may hold variables. */
export interface HeaderEdits {
  readonly set: Readonly<Record<string, string>>;
  readonly add: Readonly<Record<string, string>>;
  readonly remove: readonly string[];
}

/** `rewrite`: exactly one of its three forms. */
export type RewritePolicy =
  | { readonly policy: "rewrite"; readonly strip_prefix: string }
  | { readonly policy: "rewrite"; readonly prefix: { readonly from: string; readonly to: string } }
  | {
    readonly policy: "rewrite";
    readonly regex: { readonly match: string; readonly to: string };
  };

export interface RedirectPolicy {
  readonly policy: "redirect";
  /** A URL or path; `$host`, `$path`, `$query`, `$scheme` are replaced per request. */
  readonly to: string;
  /** 301, 302, 303, 307 or 308 (default). */
  readonly status: 301 | 302 | 303 | 307 | 308;
}

export interface HeadersPolicy {
  readonly policy: "headers";
  readonly request: HeaderEdits;
  readonly response: HeaderEdits;
}

export interface CorsPolicy {
  readonly policy: "cors";
  /** Exact origins (`https://a.example`), `*`, or `https://*.example.com` patterns. */
  readonly origins: readonly string[];
  /** Default GET, HEAD, POST. */
  readonly methods: readonly string[];
  /** Request headers a preflight may ask for (lower-cased); default none. */
  readonly headers: readonly string[];
  /** Default none. */
  readonly expose_headers: readonly string[];
  /** Default false; not allowed with `*`. */
  readonly credentials: boolean;
  /** Seconds; absent: no `Access-Control-Max-Age`. */
  readonly max_age?: number;
}

export interface BasicAuthPolicy {
  readonly policy: "basic_auth";
  /** Default `Restricted`. */
  readonly realm: string;
  /** As written; resolved against the directory of the file that names it. */
  readonly users_file: string;
  /** User -> bcrypt hash, read from `users_file` at load. */
  readonly users: Readonly<Record<string, string>>;
  /** Default false: `Authorization` is removed before the handler. */
  readonly pass_credentials: boolean;
  /** Milliseconds a verified credential is remembered; default 5 min, 0 turns it off. */
  readonly cache_ttl: number;
}

/** `allow` or `deny`: CIDRs (a bare address is a host route). */
export interface AddressPolicy {
  readonly policy: "allow" | "deny";
  readonly cidrs: readonly string[];
}

export interface CompressPolicy {
  readonly policy: "compress";
  /** Preference order on equal q-values; default `[br, gzip]`. */
  readonly encodings: readonly ("br" | "gzip")[];
  /** gzip level 1..9, default 6. */
  readonly level: number;
  /** brotli quality 0..11, default 4. */
  readonly brotli_level: number;
  /** Bytes; bodies known to be smaller are sent as they are; default 1 KiB. */
  readonly min_size: number;
  /** Media types (`text/*` allowed); default text/*, JSON, JavaScript, XML, SVG and friends. */
  readonly types: readonly string[];
}

/** One page of `error_pages`. */
export interface ErrorPage {
  /** As written. */
  readonly file: string;
  /** The file's text as read at load (at most 64 KiB). */
  readonly body: string;
  readonly content_type: string;
}

export interface ErrorPagesPolicy {
  readonly policy: "error_pages";
  /** By status (400..599). */
  readonly pages: Readonly<Record<number, ErrorPage>>;
  /** Default false: only scalwsd's own errors; true: members' error answers too. */
  readonly intercept: boolean;
}

/** One entry of a `policies:` list, named by `policy`. */
export type PolicyConfig =
  | RewritePolicy
  | RedirectPolicy
  | HeadersPolicy
  | CorsPolicy
  | BasicAuthPolicy
  | AddressPolicy
  | CompressPolicy
  | ErrorPagesPolicy;

export interface ApplicationConfig {
  readonly name: string;
  /**
   * Lower-cased; `*.example.com` is a single-label wildcard, `**.example.com` matches any
   * number of labels.
   */
  readonly domains: readonly string[];
  readonly runtime: RuntimeConfig;
  readonly routes: readonly RouteConfig[];
  /** `listed`: routes are tried in file order, the first whose conditions all hold wins. */
  readonly route_order?: "listed";
  readonly max_body?: number;
  /** Replaces `server.limit_req` for this application. */
  readonly limit_req?: LimitReqConfig;
  /** Added to `server.deny_paths` for this application. */
  readonly deny_paths?: readonly string[];
  /** The response cache for the application's routes; absent: off. */
  readonly cache?: CacheConfig;
  /** Run before every route's own policies (unless the route sets `inherit: false`). */
  readonly policies: readonly PolicyConfig[];
}

export interface TenantConfig {
  readonly name: string;
  readonly applications: readonly ApplicationConfig[];
  /** The site file the tenant came from; absent for the main file. */
  readonly file?: string;
}

/** One certificate of a TLS listener. */
export interface TlsCertificateConfig {
  /** PEM file: the certificate, then its intermediates. */
  readonly cert: string;
  /** PEM file: the private key. */
  readonly key: string;
  /** Names that choose this certificate; absent means the certificate's DNS names. */
  readonly domains?: readonly string[];
}

/** `tls.acme`: a certificate ordered and renewed from an ACME server (RFC 8555, HTTP-01). */
export interface AcmeConfig {
  /** The directory URL (https). */
  readonly directory: string;
  /** Contact of the account (`mailto:`); absent: none. */
  readonly email?: string;
  /** The certificate's names, lower-case; the first is its subject. No wildcards. */
  readonly domains: readonly string[];
  /** PEM CA bundle trusted for the directory's HTTPS besides the system roots. */
  readonly ca_file?: string;
}

/** TLS termination on a listener. */
export interface ListenerTlsConfig {
  /**
   * Chosen by SNI; the first one answers names no certificate has. Empty when only `acme`
   * is set. With `acme`, the ordered certificate comes first once it is issued.
   */
  readonly certificates: readonly TlsCertificateConfig[];
  readonly acme?: AcmeConfig;
  /** Milliseconds; default 10 s. */
  readonly handshake_timeout: number;
  /** Default true: a request for a host the connection was not opened for gets 421. */
  readonly strict_sni: boolean;
  /**
   * An SNI name no certificate has (or none): `first` (default) serves the first certificate,
   * `refuse` ends the handshake with the alert `unrecognized_name`.
   */
  readonly unknown_sni: "first" | "refuse";
}

export interface ListenerConfig extends HostPort {
  readonly name: string;
  /** As written. */
  readonly address: string;
  /** Absent: plain HTTP. */
  readonly tls?: ListenerTlsConfig;
  /** Every request on this listener is redirected (the `http -> https` listener). */
  readonly redirect?: RedirectPolicy;
}

/** `server.limits`: per-connection and per-request limits. Durations in ms, 0 turns one off. */
export interface LimitsConfig {
  /** A new connection must send a complete request head within this; default 60 s. */
  readonly header_read_timeout: number;
  /** A kept-alive connection may wait this long for its next request; default 75 s. */
  readonly idle_timeout: number;
  /** Longest gap between two chunks of a request body (408); default 60 s. */
  readonly body_read_timeout: number;
  /** Bytes of header lines (431); default and most 64 KiB, where Deno answers 400 itself. */
  readonly max_header_size: number;
  /** Header fields, a repeated name counting once (431); default and most 128 (Deno's own). */
  readonly max_header_count: number;
  /** Bytes of path and query (414); default 8 KiB. */
  readonly max_uri_length: number;
  /** Open client connections across all listeners; more wait in the backlog. 0 (default): no cap. */
  readonly max_connections: number;
  /**
   * HTTP/2 requests in flight per connection. Deno.serve's HTTP/2 (hyper) advertises and enforces
   * 200 (REFUSED_STREAM past it) whatever is set: no stream below what SETTINGS announced is
   * refused. Default 200, at most 200.
   */
  readonly max_concurrent_streams: number;
  /**
   * HTTP/2 streams per connection per second that end without their response sent (a client's
   * RST_STREAM: rapid reset); past it the connection gets GOAWAY and is closed. Default 100;
   * 0: no cap.
   */
  readonly max_resets_per_second: number;
}

/** `server.limits_store`: `limit_req` counted in Redis. */
export interface LimitsStoreConfig {
  readonly redis: {
    /** `host:port` or `unix:/path`. */
    readonly address: MemberAddress;
    /** Prefix of every key scalwsd writes; default `scalws:`. */
    readonly key_prefix: string;
    /** Longest wait for a decision; default 50 ms. */
    readonly timeout: number;
  };
  /**
   * When Redis does not answer in time or cannot be reached: `allow` the request, count it
   * `local`ly (the default), or `deny` it with 429.
   */
  readonly on_error: "allow" | "local" | "deny";
}

/** `server.tracing`: OpenTelemetry spans exported over OTLP/HTTP (JSON). */
export interface TracingConfig {
  /** The collector's traces URL, used as written (`http://127.0.0.1:4318/v1/traces`). */
  readonly endpoint: string;
  /** Share of requests without a believed parent that are traced, 0 to 1; default 1. */
  readonly sample_ratio: number;
  /** The resource's `service.name`; default `scalwsd`. */
  readonly service_name: string;
  /** Sent with every export (an API key, say); default none. */
  readonly headers: Readonly<Record<string, string>>;
  /** Believe every client's `traceparent`, not only `trusted_proxies`'; default false. */
  readonly trust_client: boolean;
  /** Finished spans waiting for export; more are dropped and counted. Default 2048. */
  readonly queue_size: number;
}

/** A request rate per client address: a token bucket of `burst + 1` tokens. */
export interface LimitReqConfig {
  /** Requests per second. */
  readonly rate: number;
  /** Requests allowed at once above the rate; default 0. */
  readonly burst: number;
}

export interface ServerConfig {
  readonly listeners: readonly ListenerConfig[];
  readonly admin: {
    /** Unix socket path of the admin API (mode 0600). */
    readonly socket?: string;
    readonly remote?: {
      readonly address: string;
      readonly hostname: string;
      readonly port: number;
      readonly tls: { readonly cert: string; readonly key: string; readonly client_ca: string };
    };
    /**
     * Loopback-only plain HTTP listener for the console: read-only (GET and HEAD) unless
     * `writes` (default false).
     */
    readonly http?: {
      readonly address: string;
      readonly hostname: string;
      readonly port: number;
      readonly writes: boolean;
    };
  };
  readonly metrics: {
    /** `/metrics`, `/readyz`, `/livez` only. */
    readonly address?: string;
    readonly hostname?: string;
    readonly port?: number;
  };
  /** CIDRs as written (`10.0.0.0/8`, `::1/128`, a bare address means a host route). */
  readonly trusted_proxies: readonly string[];
  /**
   * The request id header (default `X-Request-Id`): kept from a trusted proxy, else generated;
   * sent to members and written to the access log as `request_id`.
   */
  readonly request_id: { readonly header: string };
  /** `stdout` (default), `off`, or a file path. */
  readonly access_log: string;
  /** A domain of a configured application that answers requests for unknown hosts. */
  readonly default_host?: string;
  /** Body limit in bytes for routes without their own; default 10 MiB. */
  readonly max_body: number;
  /** HMAC key file shared by instances for affinity and sticky cookies. */
  readonly affinity_key_file?: string;
  /**
   * Directory where the member lists of `members_from: api` pools are kept across restarts
   * (`upstreams/<pool>.json`, 0600); absent: they live in memory only.
   */
  readonly state_dir?: string;
  /** Name server asked by `members_from: dns` pools; absent: the first of /etc/resolv.conf. */
  readonly resolver?: HostPort & { readonly address: string };
  /** Settings of connections to single-address upstreams and of pools' idle connections. */
  readonly upstream_client: {
    /** Idle connections kept per single-address upstream; default 32. */
    readonly keepalive: number;
    /** Idle connections older than this are closed; default 60 s. */
    readonly idle_timeout: number;
  };
  /** Default `shared`. */
  readonly listener_mode: "shared" | "reuseport" | "inherited";
  /**
   * Time in-flight requests get after SIGTERM (ADR-0035) before the process stops anyway, in ms;
   * default 30 s. `scalwsd run --drain-timeout` (the controller's `drain_timeout`) overrides it.
   */
  readonly drain_timeout: number;
  readonly limits: LimitsConfig;
  /** Per client address (after `trusted_proxies`); absent: no rate limit. */
  readonly limit_req?: LimitReqConfig;
  /** Open connections per peer address (trusted proxies exempt); absent: no limit. */
  readonly limit_conn?: number;
  /**
   * Where every `limit_req` counts: in Redis, shared by every instance and host; absent, each
   * process counts for itself.
   */
  readonly limits_store?: LimitsStoreConfig;
  /** OpenTelemetry tracing; absent: none (nothing is traced, nothing is sent). */
  readonly tracing?: TracingConfig;
  /** Normalised path prefixes answered 404 before routing, for every application. */
  readonly deny_paths: readonly string[];
  /** The one response store of the process. */
  readonly cache: {
    /** Byte budget, least recently used entries evicted past it; default 256 MiB. */
    readonly max_size: number;
    /** Cap on heuristic freshness (RFC 9111 4.2.2), ms; default 1 day, 0 turns it off. */
    readonly heuristic_max: number;
    /** The disk tier's directory, shared by the host's instances; absent: memory only. */
    readonly path?: string;
    /** The disk tier's byte budget; default 1 GiB when `path` is set, absent without it. */
    readonly disk_max_size?: number;
  };
  /** Site file globs as written, relative to the main file's directory. */
  readonly include: readonly string[];
}

/** One site file read through `server.include`. */
export interface SiteFile {
  /** The path as read (the main file's directory joined with the glob's match). */
  readonly file: string;
  readonly tenants: readonly string[];
  readonly domains: readonly string[];
}

export interface Config {
  /** The file the configuration came from (for messages). */
  readonly file: string;
  readonly server: ServerConfig;
  readonly upstreams: Readonly<Record<string, PoolConfig>>;
  readonly tenants: readonly TenantConfig[];
  /** Site files of `server.include`, in the order read. */
  readonly sites: readonly SiteFile[];
}

/** The result of a successful load: the config and the warnings to log. */
export interface Loaded {
  readonly config: Config;
  readonly warnings: readonly string[];
}
