/** parseConfig refuses broken configurations: every error at once, each naming its path. */
import assert from "node:assert/strict";
import { ConfigError } from "./errors.ts";
import { parseConfig } from "./load.ts";
import { A, app, base, type Doc, errorsOf, RT } from "./_load_test_doc.ts";

/** Each case edits the base document; `errors` are the exact, complete list expected. */
const broken: { name: string; edit: (d: Doc) => void; errors: string[] }[] = [
  {
    name: "unknown key at the root",
    edit: (d) => (d.foo = 1),
    errors: ['(root): unknown key "foo"'],
  },
  {
    name: "no listeners",
    edit: (d) => delete d.server.listeners,
    errors: ["server.listeners: at least one listener is required"],
  },
  {
    name: "empty listener list",
    edit: (d) => (d.server.listeners = []),
    errors: ["server.listeners: at least one listener is required"],
  },
  {
    name: "listener with an unknown key and a host name",
    edit: (d) => (d.server.listeners[0] = { name: "http", address: "example.com:80", port: 80 }),
    errors: [
      'server.listeners[0].address: invalid address "example.com:80": host must be an IP address or localhost',
      'server.listeners[0]: unknown key "port"',
    ],
  },
  {
    name: "listener without address, port out of range",
    edit: (d) => d.server.listeners.push({ name: "b" }, { name: "c", address: "127.0.0.1:70000" }),
    errors: [
      "server.listeners[1].address: is required",
      'server.listeners[2].address: invalid address "127.0.0.1:70000": port must be between 0 and 65535',
    ],
  },
  {
    name: "duplicate listener name and address",
    edit: (d) => d.server.listeners.push({ name: "http", address: "127.0.0.1:8080" }),
    errors: [
      'server.listeners[1].name: duplicate listener "http", first at server.listeners[0]',
      "server.listeners[1].address: address 127.0.0.1:8080 is already used by server.listeners[0].address",
    ],
  },
  {
    name: "metrics on a listener's address; port 0 may repeat",
    edit: (d) => {
      d.server.metrics = { address: "127.0.0.1:8080" };
      d.server.listeners.push({ name: "a", address: "[::1]:0" }, { name: "b", address: "[::1]:0" });
    },
    errors: [
      "server.metrics.address: address 127.0.0.1:8080 is already used by server.listeners[0].address",
    ],
  },
  {
    name: "admin http on a public address",
    edit: (d) => (d.server.admin = { http: { address: "0.0.0.0:9000" } }),
    errors: [
      "server.admin.http.address: must be a loopback address (127.0.0.0/8, ::1 or localhost)",
    ],
  },
  {
    name: "admin remote without client_ca, with an unknown key",
    edit: (d) => (d.server.admin = {
      socket: "/run/scalws/admin.sock",
      remote: { address: "0.0.0.0:9443", tls: { cert: "/c.pem", key: "/k.pem", ca: "/x" } },
    }),
    errors: [
      "server.admin.remote.tls.client_ca: is required",
      'server.admin.remote.tls: unknown key "ca"',
    ],
  },
  {
    name: "bad trusted proxy",
    edit: (d) => (d.server.trusted_proxies = ["10.0.0.0/8", "10.0.0.0/33", "proxy.local"]),
    errors: [
      'server.trusted_proxies[1]: invalid CIDR "10.0.0.0/33": prefix length must be between 0 and 32',
      'server.trusted_proxies[2]: invalid CIDR "proxy.local"',
    ],
  },
  {
    name: "default_host not configured",
    edit: (d) => (d.server.default_host = "Nope.Example.com"),
    errors: ['server.default_host: "nope.example.com" is not a domain of any application'],
  },
  {
    name: "default_host a wildcard",
    edit: (d) => {
      app(d).domains.push("*.example.com");
      d.server.default_host = "*.example.com";
    },
    errors: ['server.default_host: "*.example.com" must not be a wildcard'],
  },
  {
    name: "bad sizes",
    edit: (d) => {
      d.server.max_body = "10m";
      app(d).max_body = 0;
    },
    errors: [
      'server.max_body: invalid size "10m": use bytes or a unit B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, like 512, 64KiB or 10MiB',
      `${A}.max_body: must be at least 1 byte`,
    ],
  },
  {
    name: "bad listener_mode, access_log and upstream_client",
    edit: (d) => {
      d.server.listener_mode = "fork";
      d.server.access_log = "";
      d.server.upstream_client = { keepalive: 2000, idle_timeout: "0s" };
    },
    errors: [
      "server.access_log: must not be empty",
      'server.listener_mode: invalid value "fork"; must be one of shared, reuseport, inherited',
      "server.upstream_client.keepalive: must be between 0 and 1024",
      "server.upstream_client.idle_timeout: must be greater than 0",
    ],
  },
  {
    name: "invalid pool name",
    edit: (d) => (d.upstreams["Api Pool"] = {}),
    errors: [
      'upstreams.Api Pool: invalid name "Api Pool": use 1 to 63 characters a-z, 0-9, "_" and "-", starting with a letter or digit',
    ],
  },
  {
    name: "member weight, duplicate, scheme, path, unknown key",
    edit: (d) => (d.upstreams.api.members = [
      { address: "192.0.2.5:8080", weight: 0 },
      { address: "192.0.2.6:8080", weight: 2 },
      { address: "192.0.2.6:8080" },
      { address: "http://192.0.2.7:8080" },
      { address: "192.0.2.8:8080/api" },
      { address: "192.0.2.9:8080", wieght: 2 },
      { address: "[2001:DB8::1]:80" },
      { address: "[2001:db8:0::1]:80" },
    ]),
    errors: [
      "upstreams.api.members[0].weight: must be between 1 and 1000",
      'upstreams.api.members[2].address: duplicate member "192.0.2.6:8080"',
      'upstreams.api.members[3].address: invalid address "http://192.0.2.7:8080": a member address has no scheme, write "192.0.2.7:8080"',
      'upstreams.api.members[4].address: invalid address "192.0.2.8:8080/api": a member address has no path',
      'upstreams.api.members[5]: unknown key "wieght"; did you mean "weight"?',
      'upstreams.api.members[7].address: duplicate member "[2001:db8::1]:80"',
    ],
  },
  {
    name: "more than 10,000 members",
    edit: (d) => (d.upstreams.api.members = Array.from(
      { length: 10_001 },
      (_, i) => ({ address: `10.0.${i >> 8}.${i & 255}:80` }),
    )),
    errors: ["upstreams.api.members: at most 10000 members allowed"],
  },
  {
    name: "unix member with another member, and in an https pool",
    edit: (d) => {
      d.upstreams.api.members.push({ address: "unix:/run/api.sock" });
      d.upstreams.tls = { scheme: "https", members: [{ address: "unix:/run/tls.sock" }] };
    },
    errors: [
      "upstreams.api.members[1].address: a unix: member must be the only member of its pool",
      "upstreams.tls.members[0].address: a unix: member is only allowed with scheme: http",
    ],
  },
  {
    name: "bad balance and members_from",
    edit: (d) => {
      d.upstreams.api.balance = "random";
      d.upstreams.api.members_from = "consul";
    },
    errors: [
      'upstreams.api.members_from: invalid value "consul"; must be one of file, api, dns',
      'upstreams.api.balance: invalid value "random"; must be one of round_robin, least_conn, hash, failover',
    ],
  },
  {
    name: "hash missing with balance: hash, refused without it",
    edit: (d) => {
      d.upstreams.api.balance = "hash";
      d.upstreams.b = { balance: "least_conn", hash: { by: "client_ip" }, members_from: "api" };
    },
    errors: [
      "upstreams.api.hash: is required with balance: hash",
      "upstreams.b.hash: only allowed with balance: hash",
    ],
  },
  {
    name: "hash fields by kind",
    edit: (d) => {
      const pool = (hash: unknown) => ({ members_from: "api", balance: "hash", hash });
      d.upstreams.h1 = pool({ by: "header" });
      d.upstreams.h2 = pool({ by: "client_ip", name: "X" });
      d.upstreams.h3 = pool({ name: "X" });
      d.upstreams.h4 = pool({ by: "header", name: "X-Key", cookie_max_age: "1d" });
      d.upstreams.h5 = pool({ by: "cookie", name: "my cookie", cookie_max_age: "1500ms" });
      d.upstreams.h6 = pool({ by: "cookie", cookie_max_age: "1500ms" });
    },
    errors: [
      "upstreams.h1.hash.name: is required with by: header",
      "upstreams.h2.hash.name: not used with by: client_ip",
      "upstreams.h3.hash.by: is required",
      "upstreams.h4.hash.cookie_max_age: only allowed with by: cookie",
      'upstreams.h5.hash.name: invalid name "my cookie": must be an HTTP token',
      "upstreams.h6.hash.cookie_max_age: must be a whole number of seconds",
    ],
  },
  {
    name: "passive health, retries and keepalive out of range",
    edit: (d) =>
      Object.assign(d.upstreams.api, {
        passive_health: { failures: 101, cooldown: "2h" },
        retries: 6,
        keepalive: 1025,
      }),
    errors: [
      "upstreams.api.passive_health.failures: must be between 0 and 100",
      "upstreams.api.passive_health.cooldown: must be between 1ms and 1h",
      "upstreams.api.retries: must be between 0 and 5",
      "upstreams.api.keepalive: must be between 0 and 1024",
    ],
  },
  {
    name: "passive health cooldown 0s, failures not an integer",
    edit: (d) => (d.upstreams.api.passive_health = { failures: 1.5, cooldown: "0s" }),
    errors: [
      "upstreams.api.passive_health.failures: must be an integer",
      "upstreams.api.passive_health.cooldown: must be between 1ms and 1h",
    ],
  },
  {
    name: "bad scheme; tls without https",
    edit: (d) => {
      d.upstreams.api.scheme = "ftp";
      d.upstreams.b = { members_from: "api", tls: { server_name: "api.internal" } };
    },
    errors: [
      'upstreams.api.scheme: invalid value "ftp"; must be one of http, https',
      "upstreams.b.tls: only allowed with scheme: https",
    ],
  },
  {
    name: "health check values",
    edit: (d) => (d.upstreams.api.health_check = {
      path: "ping",
      interval: "0s",
      timeout: 3,
      rise: 0,
      fall: "2",
    }),
    errors: [
      'upstreams.api.health_check.path: invalid path "ping": must start with "/"',
      "upstreams.api.health_check.interval: must be greater than 0",
      'upstreams.api.health_check.timeout: invalid duration 3: a duration needs a unit, for example "3s"',
      "upstreams.api.health_check.rise: must be at least 1",
      "upstreams.api.health_check.fall: must be an integer",
    ],
  },
  {
    name: "sticky without ttl, zero ttl, bad cookie, same cookie as hash",
    edit: (d) => {
      d.upstreams.s1 = { members_from: "api", sticky: { cookie: "S" } };
      d.upstreams.s2 = { members_from: "api", sticky: { ttl: "0s", cookie: "a;b" } };
      d.upstreams.s3 = {
        members_from: "api",
        balance: "hash",
        hash: { by: "cookie", name: "S" },
        sticky: { ttl: "12h", cookie: "S" },
      };
    },
    errors: [
      "upstreams.s1.sticky.ttl: is required",
      "upstreams.s2.sticky.ttl: must be greater than 0",
      'upstreams.s2.sticky.cookie: invalid name "a;b": must be an HTTP token',
      'upstreams.s3.sticky.cookie: must differ from hash.name "S"',
    ],
  },
  {
    name: "unknown pools in upstream and backends",
    edit: (d) => {
      app(d).runtime.upstream.pool = "nope";
      app(d).routes = [{
        path: "/api",
        proxy: { backends: [{ pool: "api", weight: 1 }, { pool: "gone", weight: 1 }] },
      }];
    },
    errors: [
      `${RT}.upstream.pool: unknown pool "nope"`,
      `${A}.routes[0].proxy.backends[1].pool: unknown pool "gone"`,
    ],
  },
  {
    name: "upstream and backends together, and neither",
    edit: (d) => {
      app(d).runtime.backends = [{ pool: "api" }];
      app(d).routes = [{ path: "/x", runtime: { type: "proxy", websocket: true } }];
    },
    errors: [
      `${RT}: upstream and backends are mutually exclusive`,
      `${A}.routes[0].runtime: upstream or backends is required`,
    ],
  },
  {
    name: "backends count",
    edit: (d) => {
      app(d).runtime = { type: "proxy", backends: [] };
      app(d).routes = [{
        path: "/x",
        proxy: { backends: Array.from({ length: 65 }, () => ({ status: 503 })) },
      }];
    },
    errors: [
      `${RT}.backends: must have between 1 and 64 entries`,
      `${A}.routes[0].proxy.backends: must have between 1 and 64 entries`,
    ],
  },
  {
    name: "backend entries: pool and status, neither, repeats, ranges, all weights 0",
    edit: (d) => (app(d).runtime = {
      type: "proxy",
      backends: [
        { pool: "api", status: 503, weight: 0 },
        { weight: 0 },
        { status: 499, weight: 0 },
        { pool: "api", weight: 0 },
        { pool: "api", weight: 0 },
        { status: 503, weight: 1001 },
      ],
    }),
    errors: [
      `${RT}.backends[2].status: must be between 500 and 599`,
      `${RT}.backends[5].weight: must be between 0 and 1000`,
    ],
  },
  {
    name: "backend entries after the schema",
    edit: (d) => (app(d).runtime = {
      type: "proxy",
      backends: [
        { pool: "api", status: 503, weight: 0 },
        { weight: 0 },
        { pool: "api", weight: 0 },
        { pool: "api", weight: 0 },
        { status: 503, weight: 0 },
        { status: 503, weight: 0 },
      ],
    }),
    errors: [
      `${RT}.backends[0]: exactly one of pool and status is required`,
      `${RT}.backends[1]: exactly one of pool and status is required`,
      `${RT}.backends[3].pool: duplicate pool "api"`,
      `${RT}.backends[5].status: duplicate status 503`,
      `${RT}.backends: at least one backend needs a weight above 0`,
    ],
  },
  {
    name: "tls_ca_file on a pool route and with http://",
    edit: (d) => {
      app(d).runtime.tls_ca_file = "/ca.pem";
      app(d).routes = [
        { path: "/a", proxy: { upstream: "http://192.0.2.9:80", tls_ca_file: "/ca.pem" } },
        { path: "/b", proxy: { backends: [{ pool: "api" }], tls_ca_file: "/ca.pem" } },
      ];
    },
    errors: [
      `${RT}.tls_ca_file: not allowed on pool routes; set tls.ca_file on the pool`,
      `${A}.routes[0].proxy.tls_ca_file: only allowed with an https:// upstream`,
      `${A}.routes[1].proxy.tls_ca_file: not allowed on pool routes; set tls.ca_file on the pool`,
    ],
  },
  {
    name: "bad single upstreams",
    edit: (d) => (app(d).routes = [
      { path: "/a", proxy: { upstream: "http://192.0.2.9:80/api" } },
      { path: "/b", proxy: { upstream: "192.0.2.9:80" } },
      { path: "/c", proxy: { upstream: 80 } },
      { path: "/d", proxy: { upstream: {} } },
      { path: "/e", proxy: { upstream: { pool: "api", weight: 1 } } },
    ]),
    errors: [
      `${A}.routes[0].proxy.upstream: invalid upstream "http://192.0.2.9:80/api": a path is not allowed`,
      `${A}.routes[1].proxy.upstream: invalid upstream "192.0.2.9:80": must start with http://, https:// or unix:`,
      `${A}.routes[2].proxy.upstream: must be a URL ("http://host:port") or {pool: NAME}`,
      `${A}.routes[3].proxy.upstream.pool: is required`,
      `${A}.routes[4].proxy.upstream: unknown key "weight"`,
    ],
  },
  {
    name: "proxy timeouts and flags",
    edit: (d) =>
      Object.assign(app(d).runtime, {
        connect_timeout: 10,
        response_timeout: "0s",
        websocket: "yes",
        preserve_host: 1,
      }),
    errors: [
      `${RT}.preserve_host: must be true or false`,
      `${RT}.connect_timeout: invalid duration 10: a duration needs a unit, for example "10s"`,
      `${RT}.response_timeout: must be greater than 0`,
      `${RT}.websocket: must be true or false`,
    ],
  },
  {
    name: "runtime type unknown, missing, not a mapping",
    edit: (d) => {
      app(d).runtime = { type: "lambda" };
      app(d).routes = [
        { path: "/a", runtime: { upstream: "http://h" } },
        { path: "/b", runtime: "proxy" },
      ];
    },
    errors: [
      `${RT}.type: unknown type "lambda"; must be one of proxy, respond, static, php, app, node, python, deno`,
      `${A}.routes[0].runtime.type: is required`,
      `${A}.routes[1].runtime: must be a mapping`,
    ],
  },
  {
    name: "respond and static fields",
    edit: (d) => (app(d).routes = [
      {
        path: "/a",
        runtime: {
          type: "respond",
          status: 600,
          headers: { "X Bad": "1", "X-Ok": "a\r\nb", "Content-Length": "3", "X-N": 5 },
        },
      },
      { path: "/b", runtime: { type: "static", index: "a/b.html" } },
      { path: "/c", runtime: { type: "static", root: "/srv", upstream: "http://h" } },
    ]),
    errors: [
      `${A}.routes[0].runtime.status: must be between 100 and 599`,
      `${A}.routes[0].runtime.headers.X Bad: invalid name "X Bad": must be an HTTP token`,
      `${A}.routes[0].runtime.headers.X-Ok: invalid header value: control characters`,
      `${A}.routes[0].runtime.headers.Content-Length: header "Content-Length" is set by scalwsd`,
      `${A}.routes[0].runtime.headers.X-N: must be a string`,
      `${A}.routes[1].runtime.root: is required`,
      `${A}.routes[1].runtime.index: must be a file name`,
      `${A}.routes[2].runtime: unknown key "upstream"`,
    ],
  },
  {
    name: "runtime and proxy together, and neither",
    edit: (d) => {
      app(d).proxy = { upstream: { pool: "api" } };
      app(d).routes = [{ path: "/a" }];
    },
    errors: [
      `${A}: runtime and proxy are mutually exclusive`,
      `${A}.routes[0].runtime: is required`,
    ],
  },
  {
    name: "domains missing, empty, invalid, duplicated",
    edit: (d) => {
      const apps = d.tenants[0].applications;
      apps.push(
        { name: "a", runtime: { type: "static", root: "/" } },
        { name: "b", domains: [], runtime: { type: "static", root: "/" } },
        { name: "c", domains: ["a.*.com", "x_y.com"], runtime: { type: "static", root: "/" } },
      );
      d.tenants.push({
        name: "other",
        applications: [{
          name: "www",
          domains: ["EXAMPLE.com", "b.example.com", "b.example.com"],
          proxy: { upstream: { pool: "api" } },
        }],
      });
    },
    errors: [
      `tenants[0].applications[1].domains: is required`,
      `tenants[0].applications[2].domains: at least one domain is required`,
      'tenants[0].applications[3].domains[0]: invalid domain "a.*.com": a wildcard is only allowed as a leading "*."',
      'tenants[0].applications[3].domains[1]: invalid domain "x_y.com"',
      `tenants[1].applications[0].domains[0]: duplicate domain "example.com", first at ${A}.domains[0]`,
      'tenants[1].applications[0].domains[2]: duplicate domain "b.example.com", first at tenants[1].applications[0].domains[1]',
    ],
  },
  {
    name: "route paths invalid and duplicated after normalisation",
    edit: (d) => (app(d).routes = [
      { path: "/api/", runtime: { type: "static", root: "/" } },
      { path: "//api", runtime: { type: "static", root: "/" } },
      { path: "api", runtime: { type: "static", root: "/" } },
      { path: "/a/../b", runtime: { type: "static", root: "/" } },
    ]),
    errors: [
      `${A}.routes[1].path: duplicate route "/api"`,
      `${A}.routes[2].path: invalid path "api": must start with "/"`,
      `${A}.routes[3].path: invalid path "/a/../b": "." and ".." segments are not allowed`,
    ],
  },
  {
    name: "tenant and application names invalid and duplicated",
    edit: (d) => {
      d.tenants.push(
        { name: "acme", applications: [] },
        { name: "Big Co", applications: [] },
      );
      d.tenants[0].applications.push({
        name: "www",
        domains: ["b.example.com"],
        proxy: { upstream: { pool: "api" } },
      });
    },
    errors: [
      'tenants[2].name: invalid name "Big Co": use 1 to 63 characters a-z, 0-9, "_" and "-", starting with a letter or digit',
      'tenants[0].applications[1].name: duplicate application "www", first at tenants[0].applications[0]',
      'tenants[1].name: duplicate tenant "acme", first at tenants[0]',
    ],
  },
  {
    name: "unknown keys at several depths",
    edit: (d) => {
      d.server.upstream_client = { keepalive: 1, idle: "1s" };
      d.upstreams.api.passive_health = { failures: 1, cool_down: "1s" };
      d.tenants[0].owner = "x";
      app(d).title = "x";
      app(d).runtime.timeout = "1s";
      app(d).routes = [{ path: "/a", proxy: { upstream: { pool: "api" }, client: { pool: 1 } } }];
    },
    errors: [
      'server.upstream_client: unknown key "idle"',
      'upstreams.api.passive_health: unknown key "cool_down"; did you mean "cooldown"?',
      'tenants[0]: unknown key "owner"',
      `${A}: unknown key "title"`,
      `${RT}: unknown key "timeout"`,
      `${A}.routes[0].proxy.client: unknown key "pool"`,
    ],
  },
  {
    name: "sections of the wrong type",
    edit: (d) => {
      d.upstreams = ["api"];
      d.tenants = { acme: {} };
      d.server.listeners = { http: "127.0.0.1:80" };
    },
    errors: [
      "server.listeners: must be a list",
      "upstreams: must be a mapping",
      "tenants: must be a list",
    ],
  },
  {
    name: "a pool that is not a mapping, a tenant without applications",
    edit: (d) => {
      d.upstreams.empty = null;
      d.tenants.push({ name: "t2" });
    },
    errors: ["upstreams.empty: must be a mapping", "tenants[1].applications: is required"],
  },
  {
    name: "limits out of range",
    edit: (d) => {
      d.server.limits = {
        header_read_timeout: "-1s",
        idle_timeout: "soon",
        max_header_size: "65537",
        max_header_count: 129,
        max_uri_length: "1MiB",
        max_connections: -1,
        max_concurrent_streams: 201,
        max_resets_per_second: -1,
        body_timeout: "1s",
      };
    },
    errors: [
      'server.limits.header_read_timeout: invalid duration "-1s": write a number and a unit (d, h, m, s, ms), like 10s, 500ms or 1h30m',
      'server.limits.idle_timeout: invalid duration "soon": write a number and a unit (d, h, m, s, ms), like 10s, 500ms or 1h30m',
      "server.limits.max_header_size: must be at most 64KiB",
      "server.limits.max_header_count: must be between 1 and 128",
      "server.limits.max_uri_length: must be at most 64KiB",
      "server.limits.max_connections: must be between 0 and 10000000",
      "server.limits.max_concurrent_streams: must be between 1 and 200",
      "server.limits.max_resets_per_second: must be between 0 and 1000000",
      'server.limits: unknown key "body_timeout"',
    ],
  },
  {
    name: "per-source limits and deny paths",
    edit: (d) => {
      d.server.limit_req = { rate: "10r/h", burst: -1 };
      d.server.limit_conn = 0;
      d.server.deny_paths = ["/.git", "secret", "/a/../b"];
      app(d).limit_req = { rate: 0 };
      app(d).deny_paths = "/admin";
    },
    errors: [
      'server.limit_req.rate: invalid rate "10r/h": use requests per second or minute, such as "10r/s"',
      "server.limit_req.burst: must be between 0 and 1000000",
      "server.limit_conn: must be between 1 and 1000000",
      'server.deny_paths[1]: invalid path "secret": must start with "/"',
      'server.deny_paths[2]: invalid path "/a/../b": "." and ".." segments are not allowed',
      `${A}.limit_req.rate: must be greater than 0`,
      `${A}.deny_paths: must be a list`,
    ],
  },
  {
    name: "a TLS listener without certificates, with unknown keys and bad values",
    edit: (d) => {
      d.server.listeners[0].tls = { certificates: [] };
      d.server.listeners.push({
        name: "b",
        address: "127.0.0.1:8443",
        tls: {
          certificates: [{ cert: "", key: "k.pem", domains: ["*.*.x"], ocsp: true }],
          handshake_timeout: "0s",
          strict_sni: "yes",
        },
      });
    },
    errors: [
      "server.listeners[0].tls.certificates: at least one certificate is required",
      "server.listeners[1].tls.certificates[0].cert: must not be empty",
      'server.listeners[1].tls.certificates[0].domains[0]: invalid domain "*.*.x": a wildcard is only allowed as a leading "*."',
      'server.listeners[1].tls.certificates[0]: unknown key "ocsp"',
      "server.listeners[1].tls.handshake_timeout: must be greater than 0",
      "server.listeners[1].tls.strict_sni: must be true or false",
    ],
  },
  {
    name: "a TLS listener whose files cannot be read",
    edit: (d) => {
      d.server.listeners[0].tls = {
        certificates: [{ cert: "/nonexistent/c.pem", key: "/nonexistent/k.pem" }],
      };
    },
    errors: [
      "server.listeners[0].tls.certificates[0].cert: cannot read \"/nonexistent/c.pem\": No such file or directory (os error 2): readfile '/nonexistent/c.pem'",
      "server.listeners[0].tls.certificates[0].key: cannot read \"/nonexistent/k.pem\": No such file or directory (os error 2): readfile '/nonexistent/k.pem'",
    ],
  },
  {
    name: "a TLS listener with neither certificates nor acme",
    edit: (d) => {
      d.server.listeners[0].tls = { strict_sni: true };
    },
    errors: ["server.listeners[0].tls.certificates: is required unless acme is set"],
  },
  {
    name: "tls.acme with bad values, unknown keys and no server.state_dir",
    edit: (d) => {
      d.server.listeners.push({
        name: "b",
        address: "127.0.0.1:8443",
        tls: {
          acme: {
            directory: "http://ca.test/dir",
            email: "not an address",
            domains: ["a.test", "*.a.test", "A.test", "bad..name", "192.0.2.1"],
            ca_file: "/nonexistent/ca.pem",
            eab: {},
          },
        },
      }, {
        name: "c",
        address: "127.0.0.1:8444",
        tls: { acme: { directory: "https://ca.test/dir", domains: [] } },
      });
    },
    errors: [
      'server.listeners[1].tls.acme.directory: "http://ca.test/dir" must be an https:// URL',
      'server.listeners[1].tls.acme.email: invalid email address "not an address"',
      'server.listeners[1].tls.acme.domains[1]: "*.a.test": a wildcard needs a DNS-01 challenge, which scalwsd does not do',
      'server.listeners[1].tls.acme.domains[3]: invalid domain "bad..name"',
      'server.listeners[1].tls.acme.domains[4]: "192.0.2.1" is an IP address: tls.acme orders certificates for DNS names only',
      'server.listeners[1].tls.acme.domains[2]: duplicate domain "a.test"',
      'server.listeners[1].tls.acme: unknown key "eab"',
      "server.listeners[2].tls.acme.domains: at least one domain is required",
    ],
  },
  {
    name: "tls.acme with a domain listed twice",
    edit: (d) => {
      d.server.listeners.push({
        name: "b",
        address: "127.0.0.1:8443",
        tls: {
          acme: {
            directory: "https://ca.test/dir",
            domains: ["a.test", "A.TEST"],
            ca_file: "/nonexistent/ca.pem",
          },
        },
      });
    },
    errors: [
      'server.listeners[1].tls.acme.domains[1]: duplicate domain "a.test"',
    ],
  },
  {
    name: "tls.acme without server.state_dir, its ca_file unreadable (after the schema)",
    edit: (d) => {
      d.server.listeners.push({
        name: "b",
        address: "127.0.0.1:8443",
        tls: {
          acme: {
            directory: "https://ca.test/dir",
            domains: ["a.test"],
            ca_file: "/nonexistent/ca.pem",
          },
        },
      });
    },
    errors: [
      "server.listeners[1].tls.acme: needs server.state_dir (where the account and certificates are kept)",
      "server.listeners[1].tls.acme.ca_file: cannot read \"/nonexistent/ca.pem\": No such file or directory (os error 2): readfile '/nonexistent/ca.pem'",
    ],
  },
];

Deno.test("parseConfig reports the exact errors of each broken configuration", () => {
  assert.ok(broken.length >= 30);
  for (const c of broken) {
    const doc = base();
    c.edit(doc);
    assert.deepEqual(errorsOf(JSON.stringify(doc)), c.errors, c.name);
  }
});

Deno.test("parseConfig reports errors from every part of the file at once", () => {
  const text = `
server:
  listeners: [{name: http, address: "127.0.0.1:8080"}]
  max_body: lots
upstreams:
  api:
    members: [{address: "192.0.2.5:8080", weight: 5000}]
    balance: hash
    sticky: {ttl: 1x}
tenants:
  - name: acme
    applications:
      - name: www
        domains: [example.com]
        runtime: {type: proxy, upstream: {pool: missing}}
        routes:
          - {path: /api, proxy: {upstream: "http://192.0.2.9:8080"}, cache: true}
`;
  let error: ConfigError | undefined;
  try {
    parseConfig(text, "/etc/scalws/scalws.yaml");
  } catch (e) {
    error = e as ConfigError;
  }
  assert.ok(error instanceof ConfigError);
  assert.equal(error.file, "/etc/scalws/scalws.yaml");
  const expected = [
    'server.max_body: invalid size "lots": use bytes or a unit B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, like 512, 64KiB or 10MiB',
    'upstreams.api.sticky.ttl: invalid duration "1x": write a number and a unit (d, h, m, s, ms), like 10s, 500ms or 1h30m',
    "upstreams.api.members[0].weight: must be between 1 and 1000",
    `${A}.routes[0].cache: must be a mapping or false`,
    `${RT}.upstream.pool: unknown pool "missing"`,
  ];
  assert.deepEqual(error.errors, expected);
  // Each line names the file, then the line and column of the offending value.
  const at = ["4:13", "9:19", "7:51", "17:77", "15:49"];
  assert.deepEqual(
    error.lines,
    expected.map((e, i) => `/etc/scalws/scalws.yaml:${at[i]}: ${e}`),
  );
  assert.equal(error.message, error.lines.join("\n"));
});

Deno.test("parseConfig reports YAML syntax errors with line and column", () => {
  assert.deepEqual(errorsOf("server:\n  listeners: [\n"), [
    "line 3, column 1: Flow sequence in block collection must be sufficiently indented and end with a ]",
  ]);
  assert.deepEqual(errorsOf("server: {}\nserver: {}\n"), [
    'line 2, column 1: duplicate key "server": Map keys must be unique',
  ]);
  assert.deepEqual(errorsOf("- 1\n"), ["(root): must be a mapping"]);
  assert.deepEqual(errorsOf(""), ["server.listeners: at least one listener is required"]);
});
