/**
 * Configuration text for the side-by-side benchmark: the nginx members, and the three proxies
 * (scalwsd, nginx, HAProxy) routing the same paths to the same members with matching work:
 * keep-alive to members (as many idle as the scenarios have clients), X-Forwarded-For/-Proto/-Host
 * set, no access log.
 */

/** Where the benchmark's processes listen and keep their files. */
export interface BenchLayout {
  /** Temporary directory for configs, logs, static files and temp paths. */
  dir: string;
  /** Ports of member a and member b (nginx). */
  members: readonly [number, number];
  scalwsd: number;
  nginx: number;
  haproxy: number;
  /** Varnish's listening port (the cache scenarios). */
  varnish?: number;
  /** The raw `floor` proxy (bench/floor.ts), to member a. */
  floor?: number;
  /** Affinity cookie values naming member a and member b (scalwsd's 32-hex HMACs). */
  affinity: readonly [string, string];
  /** Run nginx workers as root (only when the bench itself runs as root). */
  root: boolean;
  /**
   * Idle keep-alive connections to members kept by each proxy: nginx `keepalive` (per upstream
   * block and worker), scalwsd `keepalive` (per member), HAProxy `pool-max-conn` (per server).
   */
  keepalive: number;
  /** The `php` scenario: PHP-FPM's socket (both proxies send FastCGI to it). */
  fpmSocket?: string;
  /** The `node` scenario: the port of the Node process nginx proxies to. */
  nodePort?: number;
  /** The `limited-get-64` scenario: redis-server's socket (scalwsd's `limits_store`). */
  redisSocket?: string;
  /**
   * The traced scenarios: scalwsd's `server.tracing` on, exporting to member b's `/post`
   * (which discards bodies), `sample_ratio: 0` and `trust_client: true`, so that exactly the
   * requests carrying {@link BENCH_TRACEPARENT} are traced.
   */
  tracing?: boolean;
  /** The TLS scenarios: scalwsd's and nginx's own TLS listeners. */
  tls?: TlsLayout;
}

/** The certificate kinds of the TLS scenarios: RSA-2048 and ECDSA P-256. */
export type CertKind = "rsa" | "ecdsa";
export const CERT_KINDS: readonly CertKind[] = ["rsa", "ecdsa"];

/**
 * The TLS scenarios' listeners: scalwsd and nginx answer {@link TLS_BODY} themselves (no
 * member), with the same certificate per kind, TLS 1.2 and 1.3, ALPN h2 and http/1.1.
 */
export interface TlsLayout {
  /** `${certDir}/rsa.pem`, `rsa.key`, `ecdsa.pem`, `ecdsa.key` (bench/tls_load.ts makes them). */
  certDir: string;
  /** scalwsd's TLS listener per certificate kind (its session cache is always on). */
  scalwsd: Readonly<Record<CertKind, number>>;
  /** nginx's TLS server per kind with `ssl_session_cache shared` and `ssl_session_tickets on`. */
  nginx: Readonly<Record<CertKind, number>>;
  /** The same with `ssl_session_cache off` and `ssl_session_tickets off`: no resumption. */
  nginxNoResume: Readonly<Record<CertKind, number>>;
}

/** The TLS scenarios' host name: the certificates' only name, sent as SNI and in Host. */
export const TLS_HOST = "bench.test";
/** What the TLS listeners answer: 64 bytes. */
export const TLS_BODY = "x".repeat(63) + "\n";

/** PHP-FPM workers of the `php` scenario (pm = static). */
export const FPM_WORKERS = 4;
/** What the `php` and `node` scenarios' hello-world answers. */
export const HELLO = "hello world\n";

/** The hello-world script of the `php` scenario, at `${dir}/www/php/hello.php`. */
export const HELLO_PHP = `<?php echo "hello world\\n";\n`;

/**
 * The hello-world server of the `node` scenario: on a socket path (scalwsd's pool passes one
 * in PORT) or on a loopback port (the process nginx proxies to).
 */
export const HELLO_JS = `const http = require("http");
const s = http.createServer((req, res) => {
  res.setHeader("content-type", "text/plain");
  res.end("hello world\\n");
});
s.keepAliveTimeout = 300000;
const p = process.env.PORT;
if (/^[0-9]+$/.test(p)) s.listen(Number(p), "127.0.0.1"); else s.listen(p);
`;

/** PHP-FPM for the `php` scenario: `FPM_WORKERS` static workers, no php.ini. */
export function fpmConf(l: BenchLayout): string {
  return `[global]
error_log = ${l.dir}/fpm.err.log
daemonize = no
[www]
listen = ${l.fpmSocket}
listen.backlog = 4096
pm = static
pm.max_children = ${FPM_WORKERS}
pm.max_requests = 0
`;
}

/** Name of the affinity cookie used by every proxy's hash-by-cookie pool. */
export const COOKIE = "BENCHAFF";
/** Path of the members' stub_status page (connections accepted so far). */
export const STATUS_PATH = "/bench-status";

/** The small fixed body member `name` answers on every path but the static and POST ones. */
export function smallBody(name: string): string {
  return `member ${name}: small fixed answer\n`;
}

/** Paths every proxy routes, and the pool each leads to. */
export const PATHS = {
  /** Single member a (scalwsd: the single-address form). */
  single: "/",
  small: "/",
  file16k: "/f/16k.bin",
  file1m: "/f/1m.bin",
  post: "/post",
  /** 2-member pool, round robin. */
  rr: "/rr/",
  /** 2-member pool, affinity by cookie. */
  hash: "/hash/",
  /** 1-member pool (scalwsd only): a pool against the single-address form. */
  one: "/one/",
  /** PHP-FPM over FastCGI. */
  php: "/php/hello.php",
  /** A Node hello world. */
  node: "/node/",
  /** scalwsd's fixed respond route (scalwsd only). */
  respond: "/respond",
  /** A cacheable object (max-age=3600) from member a: the cache-hit scenario. */
  cached: "/cache/obj",
  /** An object that expires every second (max-age=1) from member a: the miss storm. */
  storm: "/storm/obj",
  /**
   * A cacheable 16 KiB file (max-age=3600) from member a: the cache-hit-disk scenario. Larger
   * than scalwsd's memory tier ({@link SCALWSD_MEMORY_CACHE}), so every hit reads its file.
   */
  cachedDisk: "/dcache/16k.bin",
} as const;

/**
 * scalwsd's `server.cache.max_size` in the bench: room for the cache-hit and miss-storm objects,
 * none for the cache-hit-disk one, which its disk tier (`${dir}/scalwsd-cache`) serves.
 */
export const SCALWSD_MEMORY_CACHE = "8KiB";

/** The cacheable object's body: 1 KiB. */
export const CACHED_BODY = "c".repeat(1023) + "\n";

function nginxCommon(dir: string, name: string, root: boolean): string {
  return `${root ? "user root root;\n" : ""}daemon off;
pid ${dir}/${name}.pid;
error_log ${dir}/${name}.err.log warn;
worker_rlimit_nofile 16384;
events { worker_connections 12288; }
`;
}

function nginxTemps(dir: string, name: string): string {
  return ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((t) => `  ${t}_temp_path ${dir}/${name}-tmp/${t};\n`).join("");
}

/**
 * One member: a single nginx process (no master) answering a small fixed body, static files
 * under /f/ from `${dir}/www`, and discarding POST bodies.
 */
export function memberNginxConf(l: BenchLayout, index: 0 | 1): string {
  const name = index === 0 ? "a" : "b";
  return `${nginxCommon(l.dir, `member-${name}`, l.root)}master_process off;
worker_processes 1;
http {
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  client_max_body_size 1m;
${nginxTemps(l.dir, `member-${name}`)}  server {
    listen 127.0.0.1:${l.members[index]} backlog=4096;
    location / { default_type text/plain; return 200 "${smallBody(name).replace("\n", "\\n")}"; }
    location = ${STATUS_PATH} { stub_status; }
    location /f/ { root ${l.dir}/www; }
    location /dcache/ { alias ${l.dir}/www/f/; add_header Cache-Control "max-age=3600"; }
    location = /post { client_body_buffer_size 128k; default_type text/plain; return 200 "${name} ok\\n"; }
    location /cache/ { default_type text/plain; add_header Cache-Control "max-age=3600"; return 200 "${
    CACHED_BODY.replace("\n", "\\n")
  }"; }
    location /storm/ { default_type text/plain; add_header Cache-Control "max-age=1"; return 200 "${
    CACHED_BODY.replace("\n", "\\n")
  }"; }
  }
}
`;
}

/** nginx as the proxy: master plus ONE worker, upstream keep-alive as the docs recommend. */
export function proxyNginxConf(l: BenchLayout): string {
  const [a, b] = l.members;
  const ka = `keepalive ${l.keepalive}; keepalive_requests 100000000; keepalive_timeout 300s;`;
  return `${nginxCommon(l.dir, "nginx", l.root)}worker_processes 1;
http {
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  client_body_buffer_size 128k;
${
    nginxTemps(l.dir, "nginx")
  }  proxy_cache_path ${l.dir}/nginx-cache keys_zone=objects:16m max_size=256m;
  upstream single { server 127.0.0.1:${a}; ${ka} }
  upstream rr { server 127.0.0.1:${a}; server 127.0.0.1:${b}; ${ka} }
  upstream hashed { hash $cookie_${COOKIE} consistent; server 127.0.0.1:${a}; server 127.0.0.1:${b}; ${ka} }
${l.fpmSocket !== undefined ? `  upstream fpm { server unix:${l.fpmSocket}; }\n` : ""}${
    l.nodePort !== undefined ? `  upstream nodeapp { server 127.0.0.1:${l.nodePort}; ${ka} }\n` : ""
  }
  server {
    listen 127.0.0.1:${l.nginx} backlog=4096;
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    proxy_set_header X-Forwarded-Proto $scheme;
    proxy_set_header X-Forwarded-Host $http_host;
    location / { proxy_pass http://single; }
    location /rr/ { proxy_pass http://rr; }
    location /hash/ { proxy_pass http://hashed; }
    location /cache/ { proxy_pass http://single; proxy_cache objects; proxy_cache_lock on; }
    location /dcache/ { proxy_pass http://single; proxy_cache objects; proxy_cache_lock on; }
    location /storm/ {
      proxy_pass http://single;
      proxy_cache objects;
      proxy_cache_lock on;
      proxy_cache_use_stale updating;
      proxy_cache_background_update on;
    }
${nginxApps(l)}  }
${nginxTls(l)}}
`;
}

/**
 * nginx's TLS servers of the TLS scenarios: the same certificate and answer as scalwsd's, TLS
 * 1.2 and 1.3 (nginx 1.22's default has no 1.3), with and without session resumption.
 */
function nginxTls(l: BenchLayout): string {
  const t = l.tls;
  if (t === undefined) return "";
  const body = TLS_BODY.replace("\n", "\\n");
  let out = "";
  for (const kind of CERT_KINDS) {
    for (const resume of [true, false]) {
      const port = resume ? t.nginx[kind] : t.nginxNoResume[kind];
      const sessions = resume
        ? `ssl_session_cache shared:tls_${kind}:10m; ssl_session_tickets on;`
        : "ssl_session_cache off; ssl_session_tickets off;";
      out += `  server {
    listen 127.0.0.1:${port} ssl http2 backlog=4096;
    server_name ${TLS_HOST};
    ssl_certificate ${t.certDir}/${kind}.pem;
    ssl_certificate_key ${t.certDir}/${kind}.key;
    ssl_protocols TLSv1.2 TLSv1.3;
    ${sessions}
    location / { default_type text/plain; return 200 "${body}"; }
  }
`;
    }
  }
  return out;
}

/**
 * nginx locations of the php and node scenarios: fastcgi_pass with nginx's default
 * `fastcgi_keep_conn off` (a connection per request, as scalwsd: kept ones would pin the 4 PHP-FPM
 * workers while the connections past them wait in its accept queue), proxy_pass kept alive.
 */
function nginxApps(l: BenchLayout): string {
  let out = "";
  if (l.fpmSocket !== undefined) {
    out += `    location /php/ {
      root ${l.dir}/www;
      fastcgi_pass fpm;
      fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
      fastcgi_param SCRIPT_NAME $fastcgi_script_name;
      fastcgi_param QUERY_STRING $query_string;
      fastcgi_param REQUEST_METHOD $request_method;
      fastcgi_param CONTENT_TYPE $content_type;
      fastcgi_param CONTENT_LENGTH $content_length;
      fastcgi_param REQUEST_URI $request_uri;
      fastcgi_param DOCUMENT_ROOT $document_root;
      fastcgi_param SERVER_PROTOCOL $server_protocol;
      fastcgi_param REMOTE_ADDR $remote_addr;
      fastcgi_param SERVER_NAME $server_name;
      fastcgi_param SERVER_PORT $server_port;
    }
`;
  }
  if (l.nodePort !== undefined) out += `    location /node/ { proxy_pass http://nodeapp; }\n`;
  return out;
}

/**
 * HAProxy in one process with one thread, HTTP mode, `http-reuse always`. The cookie pool
 * uses HAProxy's own persistence cookie carrying scalwsd's affinity values, so one client
 * cookie means the same member in both.
 */
export function haproxyConf(l: BenchLayout): string {
  const [a, b] = l.members;
  return `global
  nbthread 1
  maxconn 8000

defaults
  mode http
  timeout connect 5s
  timeout client 60s
  timeout server 60s
  timeout http-keep-alive 300s
  http-reuse always
  option forwardfor

frontend fe
  bind 127.0.0.1:${l.haproxy}
  http-request set-header X-Forwarded-Proto http
  http-request set-header X-Forwarded-Host %[req.hdr(host)]
  use_backend rr if { path_beg /rr/ }
  use_backend hashed if { path_beg /hash/ }
  default_backend single

backend single
  default-server pool-max-conn ${l.keepalive} pool-purge-delay 300s
  server a 127.0.0.1:${a}

backend rr
  balance roundrobin
  default-server pool-max-conn ${l.keepalive} pool-purge-delay 300s
  server a 127.0.0.1:${a}
  server b 127.0.0.1:${b}

backend hashed
  balance roundrobin
  default-server pool-max-conn ${l.keepalive} pool-purge-delay 300s
  cookie ${COOKIE} insert indirect nocache
  server a 127.0.0.1:${a} cookie ${l.affinity[0]}
  server b 127.0.0.1:${b} cookie ${l.affinity[1]}
`;
}

/** scalwsd: the single-address form on `/`, pools for the pool scenarios, access log off. */
export function scalwsdYaml(l: BenchLayout): string {
  const [a, b] = l.members;
  return `server:
  listeners:
    - name: http
      address: "127.0.0.1:${l.scalwsd}"
${scalwsdTlsListeners(l)}  access_log: off
  cache: { max_size: ${SCALWSD_MEMORY_CACHE}, path: ${l.dir}/scalwsd-cache }
  affinity_key_file: ${l.dir}/affinity.key
  upstream_client: { keepalive: ${l.keepalive} }
${
    l.redisSocket === undefined
      ? ""
      : `  limits_store: { redis: { address: "unix:${l.redisSocket}" }, on_error: local }\n`
  }${
    l.tracing !== true ? "" : `  tracing: { endpoint: "http://127.0.0.1:${b}${PATHS.post}", ` +
      `sample_ratio: 0, trust_client: true }\n`
  }
upstreams:
  one:
    members:
      - { address: "127.0.0.1:${a}" }
    balance: round_robin
    keepalive: ${l.keepalive}
  rr:
    members:
      - { address: "127.0.0.1:${a}" }
      - { address: "127.0.0.1:${b}" }
    balance: round_robin
    keepalive: ${l.keepalive}
  hashed:
    members:
      - { address: "127.0.0.1:${a}" }
      - { address: "127.0.0.1:${b}" }
    balance: hash
    hash: { by: cookie, name: ${COOKIE} }
    keepalive: ${l.keepalive}

tenants:
  - name: bench
    applications:
      - name: bench
        domains: ["127.0.0.1"]
        runtime: { type: proxy, upstream: "http://127.0.0.1:${a}" }
        routes:
          - path: /one
            runtime: { type: proxy, upstream: { pool: one } }
          - path: /rr
            runtime: { type: proxy, upstream: { pool: rr } }
          - path: /hash
            runtime: { type: proxy, upstream: { pool: hashed } }
          - path: /respond
            runtime: { type: respond, body: "${smallBody("a").replace("\n", "\\n")}" }
          - path: /cache
            runtime: { type: proxy, upstream: "http://127.0.0.1:${a}" }
            cache: {}
          - path: /storm
            runtime: { type: proxy, upstream: "http://127.0.0.1:${a}" }
            cache: {}
          - path: /dcache
            runtime: { type: proxy, upstream: "http://127.0.0.1:${a}" }
            cache: {}
${scalwsdApps(l)}${scalwsdTlsApp(l)}${scalwsdLimitedApp(l)}`;
}

/**
 * The `limited-get-64` application: `/` of member a behind a `limit_req` no client reaches,
 * decided in Redis.
 */
function scalwsdLimitedApp(l: BenchLayout): string {
  if (l.redisSocket === undefined) return "";
  return `      - name: limited
        domains: ["limited.bench"]
        runtime: { type: proxy, upstream: "http://127.0.0.1:${l.members[0]}" }
        limit_req: { rate: 100000000r/s, burst: 1000000 }
`;
}

/** scalwsd's TLS listeners of the TLS scenarios, one per certificate kind. */
function scalwsdTlsListeners(l: BenchLayout): string {
  const t = l.tls;
  if (t === undefined) return "";
  return CERT_KINDS.map((kind) =>
    `    - name: tls-${kind}
      address: "127.0.0.1:${t.scalwsd[kind]}"
      tls:
        certificates:
          - { cert: ${t.certDir}/${kind}.pem, key: ${t.certDir}/${kind}.key }
`
  ).join("");
}

/** The application answering the TLS scenarios' host with {@link TLS_BODY}. */
function scalwsdTlsApp(l: BenchLayout): string {
  if (l.tls === undefined) return "";
  return `      - name: tls
        domains: ["${TLS_HOST}"]
        runtime: { type: respond, body: "${TLS_BODY.replace("\n", "\\n")}" }
`;
}

/** scalwsd routes of the php and node scenarios: type php, and its own node pool. */
function scalwsdApps(l: BenchLayout): string {
  let out = "";
  if (l.fpmSocket !== undefined) {
    out += `          - path: /php
            runtime: { type: php, fastcgi: "unix:${l.fpmSocket}", root: ${l.dir}/www }
`;
  }
  if (l.nodePort !== undefined) {
    out += `          - path: /node
            runtime: { type: node, entry: ${l.dir}/hello.js, workers: 1 }
`;
  }
  return out;
}

/**
 * Varnish (Debian's `varnish`, `-s malloc`) in front of member a: its built-in VCL caches by
 * the member's Cache-Control (and its default grace serves a stale object while one background
 * fetch refreshes it); only the cache scenarios use it.
 */
export function varnishVcl(l: BenchLayout): string {
  return `vcl 4.1;
backend a { .host = "127.0.0.1"; .port = "${l.members[0]}"; }
`;
}

/** varnishd's arguments: foreground, one listen address, 256 MiB of malloc storage. */
export function varnishArgs(l: BenchLayout): string[] {
  return [
    "-F",
    "-n",
    `${l.dir}/varnish`,
    "-a",
    `127.0.0.1:${l.varnish}`,
    "-f",
    `${l.dir}/varnish.vcl`,
    "-s",
    "malloc,256m",
    "-T",
    "none",
    // No privilege separation: the files live in the bench's private temporary directory.
    "-j",
    "none",
  ];
}

/** The sampled W3C context the traced scenarios send (a fixed trace, a fixed parent). */
export const BENCH_TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/**
 * wrk script: every 100th request of a thread carries {@link BENCH_TRACEPARENT}; both request
 * texts are built once per thread, so the per-request Lua returns a prebuilt string.
 */
export function tracedLua(every: number): string {
  return `local plain, traced
local n = 0
function init(args)
  plain = wrk.format()
  traced = wrk.format(nil, nil, { ["traceparent"] = "${BENCH_TRACEPARENT}" })
end
function request()
  n = n + 1
  if n % ${every} == 0 then return traced end
  return plain
end
`;
}

/** wrk script: POST of `bytes` bytes, built once per thread. */
export function postLua(bytes: number): string {
  return `wrk.method = "POST"
wrk.body = string.rep("x", ${bytes})
wrk.headers["Content-Type"] = "application/octet-stream"
`;
}

/**
 * wrk script: each thread sends one fixed affinity cookie, threads alternating between the
 * given values, so that a 2-thread run spreads over both members with no per-request Lua.
 */
export function cookieLua(values: readonly string[]): string {
  const list = values.map((v) => `"${COOKIE}=${v}"`).join(", ");
  return `local cookies = { ${list} }
local n = 0
function setup(thread)
  n = n + 1
  thread:set("cookie", cookies[(n - 1) % #cookies + 1])
end
function init(args)
  wrk.headers["Cookie"] = cookie
end
`;
}
