/** Valid configurations provision to their values and defaults, deeply frozen. */
import assert from "node:assert/strict";
import { parseConfig } from "./load.ts";
import type { Config } from "./types.ts";
import { makePki } from "../base/_test_certs.ts";
import { A, COMPLETE_EXAMPLE, errorsOf, EVERY_DIR } from "./_load_test_doc.ts";
import { POOL_DEFAULTS, SERVER_DEFAULTS } from "./_test_defaults.ts";

function member(host: string, port: number, weight = 1) {
  const canonical = `${host}:${port}`;
  return {
    address: canonical,
    parsed: { kind: "tcp", hostname: host, port, canonical },
    weight,
  };
}

const PROXY_DEFAULTS = {
  type: "proxy",
  preserve_host: false,
  connect_timeout: 5_000,
  response_timeout: 60_000,
  websocket: false,
};

Deno.test("the guide's complete example provisions to the expected values and defaults", () => {
  const { config, warnings } = parseConfig(COMPLETE_EXAMPLE, "lb.yaml");
  assert.deepEqual(warnings, []);
  const expected: Config = {
    file: "lb.yaml",
    server: {
      listeners: [{ name: "http", address: "0.0.0.0:80", hostname: "0.0.0.0", port: 80 }],
      ...SERVER_DEFAULTS,
    },
    upstreams: {
      web: {
        ...POOL_DEFAULTS,
        name: "web",
        members: [member("192.0.2.5", 8080, 2), member("192.0.2.6", 8080)],
        balance: "hash",
        hash: { by: "cookie", name: "SCALWS_AFFINITY", cookie_max_age: 0 },
        passive_health: { failures: 3, cooldown: 30_000 },
      },
      "api-stable": {
        ...POOL_DEFAULTS,
        name: "api-stable",
        members: [member("198.51.100.5", 9000), member("198.51.100.6", 9000)],
        retries: 2,
      },
      "api-canary": { ...POOL_DEFAULTS, name: "api-canary", members: [], members_from: "api" },
    } as Config["upstreams"],
    tenants: [{
      name: "acme",
      applications: [
        {
          name: "www",
          domains: ["example.com", "www.example.com"],
          runtime: {
            ...PROXY_DEFAULTS,
            target: { kind: "pool", pool: "web" },
            response_timeout: 30_000,
          } as Config["tenants"][0]["applications"][0]["runtime"],
          routes: [{
            path: "/api",
            exact: false,
            policies: [],
            inherit: true,
            runtime: {
              ...PROXY_DEFAULTS,
              target: {
                kind: "backends",
                backends: [{ pool: "api-stable", weight: 90 }, { pool: "api-canary", weight: 10 }],
              },
            } as Config["tenants"][0]["applications"][0]["runtime"],
          }],
          policies: [],
        },
        {
          name: "shop",
          domains: ["shop.example.com"],
          runtime: {
            ...PROXY_DEFAULTS,
            target: { kind: "pool", pool: "web" },
          } as Config["tenants"][0]["applications"][0]["runtime"],
          routes: [],
          policies: [],
        },
      ],
    }],
    sites: [],
  };
  assert.deepEqual(config, expected);
});

const EVERY_KEY = `
server:
  listeners:
    - {name: http, address: "0.0.0.0:80"}
    - {name: v6, address: "[::]:80"}
  admin:
    socket: /run/scalws/admin.sock
    remote:
      address: "0.0.0.0:9443"
      tls: {cert: /etc/scalws/admin.pem, key: /etc/scalws/admin.key, client_ca: /etc/scalws/ca.pem}
    http: {address: "localhost:9000"}
  metrics: {address: "127.0.0.1:9100"}
  trusted_proxies: [10.0.0.0/8, "::1", 192.0.2.1]
  access_log: /var/log/scalws/access.log
  default_host: WWW.example.com
  max_body: 1MB
  affinity_key_file: /etc/scalws/affinity.key
  listener_mode: reuseport
  upstream_client: {keepalive: 0, idle_timeout: 1m30s}
upstreams:
  sessions:
    members: [{address: "[2001:DB8:0::5]:8080", weight: 3}, {address: "API-1.internal:8080"}]
    members_from: api
    balance: hash
    hash: {by: header, name: X-Session}
    passive_health: {failures: 0, cooldown: 1ms}
    retries: 0
    keepalive: 1024
    scheme: https
    tls: {ca_file: /etc/scalws/upstream-ca.pem, server_name: API.internal}
  edge:
    members: [{address: "192.0.2.11:80"}, {address: "192.0.2.12:80"}]
    balance: failover
    health_check: {path: /ping, interval: 10s, timeout: 1s, rise: 3, fall: 1}
    sticky: {ttl: 12h}
  ip:
    members: [{address: "192.0.2.20:80"}]
    balance: hash
    hash: {by: client_ip}
    health_check: {}
  local:
    members: [{address: "unix:/run/app.sock"}]
    balance: least_conn
    hash: ~
  spare: {}
tenants:
  - name: acme
    applications:
      - name: www
        domains: [WWW.Example.com, "*.example.com"]
        proxy:
          upstream: https://app.internal:8443/
          preserve_host: true
          connect_timeout: 2s
          response_timeout: 1d
          websocket: true
          tls_ca_file: /etc/scalws/app-ca.pem
          client: {keepalive: 8, idle_timeout: 30s}
        max_body: 64KiB
        routes:
          - path: /static/
            runtime: {type: static, root: /srv/www}
            max_body: 512
          - path: /health
            runtime:
              type: respond
              body: ok
              headers: {Content-Type: text/plain}
          - path: /
            runtime: {type: respond}
          - path: /sessions
            runtime:
              type: proxy
              upstream: {pool: sessions}
              client: {keepalive: 1}
          - path: /split
            proxy:
              backends: [{pool: edge, weight: 0}, {status: 503}]
          - path: /sock
            proxy: {upstream: "unix:/run/other.sock"}
`;

Deno.test("every key provisions to its value", () => {
  const text = EVERY_KEY.replace("    hash: ~\n", "");
  const { config, warnings } = parseConfig(text, "all.yaml", EVERY_DIR);
  assert.deepEqual(warnings, [
    "upstreams.spare.members: pool has no members; requests get 503",
    `${A}.routes[3].runtime.client: ignored on pool routes; pools use server.upstream_client`,
  ]);
  const s = config.server;
  assert.deepEqual(s.listeners[1], { name: "v6", address: "[::]:80", hostname: "::", port: 80 });
  assert.deepEqual(s.admin, {
    socket: "/run/scalws/admin.sock",
    remote: {
      address: "0.0.0.0:9443",
      hostname: "0.0.0.0",
      port: 9443,
      tls: {
        cert: "/etc/scalws/admin.pem",
        key: "/etc/scalws/admin.key",
        client_ca: "/etc/scalws/ca.pem",
      },
    },
    http: { address: "localhost:9000", hostname: "localhost", port: 9000, writes: false },
  });
  assert.deepEqual(s.metrics, { address: "127.0.0.1:9100", hostname: "127.0.0.1", port: 9100 });
  assert.deepEqual(s.trusted_proxies, ["10.0.0.0/8", "::1", "192.0.2.1"]);
  assert.equal(s.access_log, "/var/log/scalws/access.log");
  assert.equal(s.default_host, "www.example.com");
  assert.equal(s.max_body, 1_000_000);
  assert.equal(s.affinity_key_file, "/etc/scalws/affinity.key");
  assert.equal(s.listener_mode, "reuseport");
  assert.deepEqual(s.upstream_client, { keepalive: 0, idle_timeout: 90_000 });

  const u = config.upstreams;
  assert.deepEqual(Object.keys(u), ["sessions", "edge", "ip", "local", "spare"]);
  assert.deepEqual(u.sessions, {
    name: "sessions",
    members: [
      {
        address: "[2001:db8::5]:8080",
        parsed: {
          kind: "tcp",
          hostname: "2001:db8::5",
          port: 8080,
          canonical: "[2001:db8::5]:8080",
        },
        weight: 3,
      },
      member("api-1.internal", 8080),
    ],
    members_from: "api",
    balance: "hash",
    hash: { by: "header", name: "X-Session", cookie_max_age: 0 },
    passive_health: { failures: 0, cooldown: 1 },
    retries: 0,
    keepalive: 1024,
    protocol: "http",
    scheme: "https",
    tls: { ca_file: "/etc/scalws/upstream-ca.pem", server_name: "api.internal" },
  });
  assert.equal(u.edge.balance, "failover");
  assert.deepEqual(u.edge.health_check, {
    path: "/ping",
    interval: 10_000,
    timeout: 1_000,
    rise: 3,
    fall: 1,
  });
  assert.deepEqual(u.edge.sticky, { ttl: 43_200_000, cookie: "SCALWS_STICKY_edge" });
  assert.deepEqual(u.ip.hash, { by: "client_ip", name: "", cookie_max_age: 0 });
  assert.deepEqual(u.ip.health_check, { interval: 5_000, timeout: 3_000, rise: 2, fall: 2 });
  assert.deepEqual(u.local.members[0].parsed, {
    kind: "unix",
    path: "/run/app.sock",
    canonical: "unix:/run/app.sock",
  });
  assert.equal(u.local.hash, undefined);
  assert.equal("health_check" in u.local, false);
  assert.equal("sticky" in u.local, false);
  assert.deepEqual(u.spare, { ...POOL_DEFAULTS, name: "spare", members: [] });

  const www = config.tenants[0].applications[0];
  assert.deepEqual(www.domains, ["www.example.com", "*.example.com"]);
  assert.equal(www.max_body, 65_536);
  assert.deepEqual(www.runtime, {
    type: "proxy",
    target: {
      kind: "address",
      url: "https://app.internal:8443",
      scheme: "https",
      address: {
        kind: "tcp",
        hostname: "app.internal",
        port: 8443,
        canonical: "app.internal:8443",
      },
      authority: "app.internal:8443",
    },
    preserve_host: true,
    connect_timeout: 2_000,
    response_timeout: 86_400_000,
    websocket: true,
    tls_ca_file: "/etc/scalws/app-ca.pem",
    client: { keepalive: 8, idle_timeout: 30_000 },
  });
  assert.deepEqual(www.routes.map((r) => r.path), [
    "/static",
    "/health",
    "/",
    "/sessions",
    "/split",
    "/sock",
  ]);
  assert.deepEqual(www.routes[0], {
    path: "/static",
    exact: false,
    runtime: {
      type: "static",
      root: "/srv/www",
      index: "index.html",
      follow_symlinks: "inside_root",
      allowed_roots: [],
    },
    max_body: 512,
    policies: [],
    inherit: true,
  });
  assert.deepEqual(www.routes[1].runtime, {
    type: "respond",
    status: 200,
    body: "ok",
    headers: { "Content-Type": "text/plain" },
  });
  assert.deepEqual(www.routes[2].runtime, { type: "respond", status: 200, body: "", headers: {} });
  assert.deepEqual(www.routes[3].runtime, {
    ...PROXY_DEFAULTS,
    target: { kind: "pool", pool: "sessions" },
  });
  assert.deepEqual(www.routes[4].runtime, {
    ...PROXY_DEFAULTS,
    target: {
      kind: "backends",
      backends: [{ pool: "edge", weight: 0 }, { status: 503, weight: 1 }],
    },
  });
  const sock = www.routes[5].runtime;
  assert.ok(sock.type === "proxy" && sock.target.kind === "address");
  assert.equal(sock.target.authority, "localhost");
  assert.equal(sock.target.address.canonical, "unix:/run/other.sock");
});

Deno.test("a null value is not taken as absent", () => {
  assert.deepEqual(errorsOf(EVERY_KEY, EVERY_DIR), ["upstreams.local.hash: must be a mapping"]);
});

Deno.test("the loaded configuration is deeply frozen", () => {
  const loaded = parseConfig(EVERY_KEY.replace("    hash: ~\n", ""), "all.yaml", EVERY_DIR);
  const { config } = loaded;
  const objects: unknown[] = [
    loaded,
    loaded.warnings,
    config,
    config.server,
    config.server.listeners,
    config.server.listeners[0],
    config.server.admin.remote?.tls,
    config.server.trusted_proxies,
    config.upstreams,
    config.upstreams.sessions.members,
    config.upstreams.sessions.members[0].parsed,
    config.upstreams.sessions.hash,
    config.upstreams.sessions.tls,
    config.upstreams.edge.health_check,
    config.tenants[0].applications[0].domains,
    config.tenants[0].applications[0].routes[1].runtime,
    config.tenants[0].applications[0].routes[4].runtime,
  ];
  for (const o of objects) assert.ok(Object.isFrozen(o), JSON.stringify(o));
  const www = config.tenants[0].applications[0];
  assert.throws(() => {
    (config.server as { max_body: number }).max_body = 1;
  }, TypeError);
  assert.throws(() => {
    (www.domains as string[]).push("evil.example");
  }, TypeError);
  const headers = (www.routes[1].runtime as { headers: Record<string, string> }).headers;
  assert.throws(() => {
    headers["X-Evil"] = "1";
  }, TypeError);
});

Deno.test("limits, per-source limits, deny paths and TLS listeners provision to their values", async () => {
  const pki = await makePki();
  try {
    const a = await pki.issue("a", ["a.example", "*.a.example"]);
    const b = await pki.issue("b", ["b.example"]);
    const text = `
server:
  listeners:
    - name: https
      address: "0.0.0.0:443"
      tls:
        certificates:
          - {cert: ${a.cert}, key: ${a.key}}
          - {cert: ${b.cert}, key: ${b.key}, domains: [b.example]}
        handshake_timeout: 5s
        strict_sni: false
    - {name: plain, address: "0.0.0.0:80", tls: {certificates: [{cert: ${b.cert}, key: ${b.key}}]}}
  limits:
    header_read_timeout: 10s
    idle_timeout: 0s
    body_read_timeout: 30s
    max_header_size: 16KiB
    max_header_count: 50
    max_uri_length: 2KiB
    max_connections: 10000
    max_concurrent_streams: 64
    max_resets_per_second: 0
  limit_req: {rate: 600r/m, burst: 20}
  limit_conn: 32
  deny_paths: [/.git, "/wp-admin/"]
tenants:
  - name: acme
    applications:
      - name: www
        domains: [a.example]
        runtime: {type: respond}
        limit_req: {rate: 2.5}
        deny_paths: [/private]
`;
    const { config, warnings } = parseConfig(text, "tls.yaml");
    assert.deepEqual(warnings, []);
    const s = config.server;
    assert.deepEqual(s.listeners[0].tls, {
      certificates: [
        { cert: a.cert, key: a.key },
        { cert: b.cert, key: b.key, domains: ["b.example"] },
      ],
      handshake_timeout: 5_000,
      strict_sni: false,
      unknown_sni: "first",
    });
    assert.deepEqual(s.listeners[1].tls, {
      certificates: [{ cert: b.cert, key: b.key }],
      handshake_timeout: 10_000,
      strict_sni: true,
      unknown_sni: "first",
    });
    assert.deepEqual(s.limits, {
      header_read_timeout: 10_000,
      idle_timeout: 0,
      body_read_timeout: 30_000,
      max_header_size: 16_384,
      max_header_count: 50,
      max_uri_length: 2_048,
      max_connections: 10_000,
      max_concurrent_streams: 64,
      max_resets_per_second: 0,
    });
    assert.deepEqual(s.limit_req, { rate: 10, burst: 20 });
    assert.equal(s.limit_conn, 32);
    assert.deepEqual(s.deny_paths, ["/.git", "/wp-admin"]);
    const www = config.tenants[0].applications[0];
    assert.deepEqual(www.limit_req, { rate: 2.5, burst: 0 });
    assert.deepEqual(www.deny_paths, ["/private"]);
  } finally {
    await pki.close();
  }
});
