import { BENCH_TRACEPARENT, type CertKind, PATHS } from "./configs.ts";

/**
 * The proxies compared; Varnish only in the scenarios that name it (the cache ones). `floor` is
 * the minimal raw proxy of `bench/floor.ts` (Deno.listen + Deno.connect, member a only): what
 * this runtime allows at best.
 */
export type ServerName = "scalwsd" | "nginx" | "haproxy" | "varnish" | "floor";
export const SERVERS: readonly ServerName[] = ["scalwsd", "nginx", "haproxy", "varnish", "floor"];

/** The proxies that route by path to pools (`floor` talks to member a only). */
const ROUTING: readonly ServerName[] = ["scalwsd", "nginx", "haproxy"];

/** One wrk load shape, run in turn against every server it names. */
export interface Scenario {
  name: string;
  what: string;
  path: string;
  connections: number;
  /** Extra request headers (`-H`). */
  headers?: readonly string[];
  /** A wrk Lua script written by the bench. */
  script?: "post" | "cookie" | "traced-1pct";
  /** Servers it runs against; all but Varnish when absent. */
  servers?: readonly ServerName[];
  /** Counts the requests that reached member a during the run (the miss storm). */
  countMemberRequests?: boolean;
  /**
   * Instead of a wrk load: this many keep-alive connections, one request each, then held idle;
   * the proxy's RSS growth is reported.
   */
  idle?: number;
  /** With `idle`: the connections are TLS ones, to scalwsd's and nginx's TLS listeners. */
  idleTls?: CertKind;
  /** Over TLS with h2load instead of wrk, to scalwsd's and nginx's own TLS listeners. */
  tls?: TlsLoad;
}

/**
 * A TLS load (h2load): the listeners answer 64 bytes themselves, so what is measured is TLS and
 * HTTP, not proxying.
 */
export interface TlsLoad {
  cert: CertKind;
  /** HTTP/2 (ALPN h2) rather than HTTP/1.1 (`--h1`). */
  h2: boolean;
  /**
   * - `keep-alive`: `connections` connections kept open for the whole run;
   * - `resume`: a new connection per request (`Connection: close`), each h2load client
   *   resuming its TLS session (TLS 1.3 ticket); nginx with session cache and tickets on;
   * - `full`: a new connection and a full handshake per request: h2load runs again and again
   *   with one request per client (a new client never resumes); nginx with session cache and
   *   tickets off.
   */
  connection: "keep-alive" | "resume" | "full";
  /** scalwsd's CPU per request should be at most this many times nginx's (issues 18, 25). */
  cpuTarget: number;
}

/** The servers of the TLS scenarios: each answers over its own TLS listener. */
const TLS_SERVERS: readonly ServerName[] = ["scalwsd", "nginx"];

/** True when scenario `s` runs against `server`. */
export function runsOn(s: Scenario, server: ServerName): boolean {
  return s.servers === undefined ? server !== "varnish" : s.servers.includes(server);
}

/** The scenarios in the order they run; `get-64` is the headline. */
export const SCENARIOS: readonly Scenario[] = [
  {
    name: "get-64",
    what: "keep-alive GET, small body, 64 connections (headline)",
    path: PATHS.small,
    connections: 64,
  },
  {
    name: "get-512",
    what: "keep-alive GET, small body, 512 connections",
    path: PATHS.small,
    connections: 512,
  },
  {
    name: "close-64",
    what: "new connection per request (Connection: close), 64 connections",
    path: PATHS.small,
    connections: 64,
    headers: ["Connection: close"],
  },
  {
    name: "get-16k",
    what: "keep-alive GET, 16 KiB static file from the member",
    path: PATHS.file16k,
    connections: 64,
  },
  {
    name: "get-1m",
    what: "keep-alive GET, 1 MiB static file from the member",
    path: PATHS.file1m,
    connections: 64,
  },
  {
    name: "post-64k",
    what: "keep-alive POST of a 64 KiB body, small answer",
    path: PATHS.post,
    connections: 64,
    script: "post",
  },
  {
    name: "pool-rr",
    what: "2-member pool, round robin, small body",
    path: PATHS.rr,
    connections: 64,
    servers: ROUTING,
  },
  {
    name: "pool-cookie",
    what: "2-member pool, affinity by cookie (each wrk thread holds one member's cookie)",
    path: PATHS.hash,
    connections: 64,
    script: "cookie",
    servers: ROUTING,
  },
  {
    name: "pool-1",
    what: "1-member pool, small body (against get-64: pool vs single-address form)",
    path: PATHS.one,
    connections: 64,
    servers: ["scalwsd"],
  },
  {
    name: "limited-get-64",
    what: "get-64 through a limit_req no client reaches, counted in Redis (server.limits_store, " +
      "redis-server on a Unix socket): against get-64, the cost of a shared limit",
    path: PATHS.small,
    connections: 64,
    headers: ["Host: limited.bench"],
    servers: ["scalwsd"],
  },
  {
    name: "get-64-traced",
    what: "get-64 with every request traced (server.tracing; each request carries a sampled " +
      "traceparent, which scalwsd continues), spans exported to member b: against get-64, the " +
      "cost of sample_ratio 1.0",
    path: PATHS.small,
    connections: 64,
    headers: [`traceparent: ${BENCH_TRACEPARENT}`],
    servers: ["scalwsd"],
  },
  {
    name: "get-64-traced-1pct",
    what: "get-64 with 1 request in 100 traced (a wrk script): against get-64, the cost of " +
      "sample_ratio 0.01",
    path: PATHS.small,
    connections: 64,
    script: "traced-1pct",
    servers: ["scalwsd"],
  },
  {
    name: "php-16",
    what: "PHP hello world over FastCGI, 16 clients: the same PHP-FPM (4 static workers) behind " +
      "scalwsd type php and nginx fastcgi_pass, a FastCGI connection per request in both",
    path: PATHS.php,
    connections: 16,
    servers: ["scalwsd", "nginx"],
  },
  {
    name: "php",
    what: "the same with 64 clients",
    path: PATHS.php,
    connections: 64,
    servers: ["scalwsd", "nginx"],
  },
  {
    name: "node",
    what: "Node hello world: scalwsd's own node pool (1 worker) against nginx proxy_pass to the " +
      "same script (1 process)",
    path: PATHS.node,
    connections: 64,
    servers: ["scalwsd", "nginx"],
  },
  {
    name: "respond",
    what: "scalwsd's fixed respond route: the floor a cache hit is compared with",
    path: PATHS.respond,
    connections: 64,
    servers: ["scalwsd"],
  },
  {
    name: "cache-hit",
    what: "a cached 1 KiB object (max-age=3600): scalwsd cache, nginx proxy_cache, Varnish " +
      "-s malloc; the member is asked once",
    path: PATHS.cached,
    connections: 64,
    servers: ["scalwsd", "nginx", "varnish"],
  },
  {
    name: "cache-hit-disk",
    what: "a cached 16 KiB file (max-age=3600) read from scalwsd's disk tier on every hit " +
      "(memory tier too small for it, page cache warm) against nginx proxy_cache",
    path: PATHS.cachedDisk,
    connections: 64,
    servers: ["scalwsd", "nginx"],
  },
  {
    name: "miss-storm",
    what: "64 connections on one object that expires every second (max-age=1): the member " +
      "should see one request per expiry",
    path: PATHS.storm,
    connections: 64,
    servers: ["scalwsd", "nginx", "varnish"],
    countMemberRequests: true,
  },
  {
    name: "tls-get-64",
    what: "TLS keep-alive, HTTP/1.1 (h2load --h1), 64 connections, 64-byte answer, RSA-2048",
    path: "/",
    connections: 64,
    servers: TLS_SERVERS,
    tls: { cert: "rsa", h2: false, connection: "keep-alive", cpuTarget: 1.5 },
  },
  {
    name: "tls-get-64-h2",
    what: "TLS keep-alive, HTTP/2 (h2load, one stream per connection), 64 connections",
    path: "/",
    connections: 64,
    servers: TLS_SERVERS,
    tls: { cert: "rsa", h2: true, connection: "keep-alive", cpuTarget: 1.5 },
  },
  {
    name: "tls-new",
    what: "a new TLS connection per request (Connection: close), sessions resumed on both " +
      "sides (TLS 1.3 tickets), 64 h2load clients, RSA-2048",
    path: "/",
    connections: 64,
    servers: TLS_SERVERS,
    tls: { cert: "rsa", h2: false, connection: "resume", cpuTarget: 1.3 },
  },
  {
    name: "tls-full",
    what: "a new TLS connection and a full handshake per request (nginx: resumption off), " +
      "64 at a time, RSA-2048",
    path: "/",
    connections: 64,
    servers: TLS_SERVERS,
    tls: { cert: "rsa", h2: false, connection: "full", cpuTarget: 1.5 },
  },
  {
    name: "tls-full-ecdsa",
    what: "the same with an ECDSA P-256 certificate",
    path: "/",
    connections: 64,
    servers: TLS_SERVERS,
    tls: { cert: "ecdsa", h2: false, connection: "full", cpuTarget: 1.3 },
  },
  {
    name: "idle-10k",
    what: "10,000 idle keep-alive connections after one request each: RSS growth",
    path: PATHS.small,
    connections: 10_000,
    idle: 10_000,
    servers: ["scalwsd", "nginx"],
  },
  {
    name: "idle-tls-10k",
    what: "10,000 idle TLS keep-alive connections (ECDSA P-256) after one request each: RSS " +
      "growth (target: scalwsd 16 KiB each at most)",
    path: "/",
    connections: 10_000,
    idle: 10_000,
    idleTls: "ecdsa",
    servers: ["scalwsd", "nginx"],
  },
];

/**
 * A keep-alive scenario through members: every client connection is reused (no
 * `Connection: close`), so a proxy keeping as many idle member connections as there are clients
 * opens almost none during the run. TLS and idle scenarios have no member behind them.
 */
export function keepsAlive(s: Scenario): boolean {
  return s.tls === undefined && s.idle === undefined &&
    !(s.headers ?? []).some((h) => /^connection:\s*close$/i.test(h));
}

/** Member connections per 1,000 requests above which a keep-alive cell is `unfair` (issue 25). */
export const UNFAIR_CONNS_PER_1K = 5;

/**
 * The idle member connections each proxy keeps by default: as many as the largest client
 * connection count among `scenarios` that go through members (idle and TLS scenarios left
 * out), at least 64, so that no proxy has to close and reopen member connections under a load
 * it could carry on reused ones (nginx's `keepalive 32` under 64 clients opened 100-224 per
 * 1,000 requests).
 */
export function fairKeepalive(scenarios: readonly Scenario[]): number {
  let n = 64;
  for (const s of scenarios) {
    if (s.tls === undefined && s.idle === undefined) n = Math.max(n, s.connections);
  }
  return Math.min(n, 1024);
}

/** The scenarios named in `only` (comma-separated), all when empty; throws on an unknown name. */
export function selectScenarios(only: string | undefined): Scenario[] {
  if (only === undefined || only.trim() === "") return [...SCENARIOS];
  const names = only.split(",").map((s) => s.trim()).filter((s) => s !== "");
  for (const n of names) {
    if (!SCENARIOS.some((s) => s.name === n)) {
      throw new Error(
        `Unknown scenario "${n}" (known: ${SCENARIOS.map((s) => s.name).join(", ")})`,
      );
    }
  }
  return SCENARIOS.filter((s) => names.includes(s.name));
}

/** The servers named in `list` (comma-separated), all when empty; throws on an unknown name. */
export function selectServers(list: string | undefined): ServerName[] {
  if (list === undefined || list.trim() === "") return [...SERVERS];
  const out: ServerName[] = [];
  for (const n of list.split(",").map((s) => s.trim()).filter((s) => s !== "")) {
    if (!(SERVERS as readonly string[]).includes(n)) {
      throw new Error(`Unknown server "${n}" (known: ${SERVERS.join(", ")})`);
    }
    if (!out.includes(n as ServerName)) out.push(n as ServerName);
  }
  return out;
}
