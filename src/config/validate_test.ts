import assert from "node:assert/strict";
import type { Draft, Sink } from "./provision.ts";
import type { ServerConfig } from "./types.ts";
import { validate } from "./validate.ts";

function server(extra: Partial<ServerConfig> = {}): ServerConfig {
  return {
    listeners: [{ name: "http", address: "0.0.0.0:80", hostname: "0.0.0.0", port: 80 }],
    admin: {},
    metrics: {},
    trusted_proxies: [],
    request_id: { header: "X-Request-Id" },
    access_log: "stdout",
    max_body: 1,
    upstream_client: { keepalive: 32, idle_timeout: 1 },
    listener_mode: "shared",
    drain_timeout: 30_000,
    limits: {
      header_read_timeout: 1,
      idle_timeout: 1,
      body_read_timeout: 1,
      max_header_size: 1,
      max_header_count: 1,
      max_uri_length: 1,
      max_connections: 0,
      max_concurrent_streams: 128,
      max_resets_per_second: 100,
    },
    deny_paths: [],
    cache: { max_size: 1 << 20, heuristic_max: 86_400_000 },
    include: [],
    ...extra,
  };
}

function draft(extra: Partial<Draft> = {}): Draft {
  return {
    server: server(),
    pools: new Map(),
    poolNames: new Set(["api"]),
    tenants: [{
      path: "tenants[0]",
      name: "acme",
      applications: [{ path: "tenants[0].applications[0]", name: "www", domains: ["example.com"] }],
    }],
    poolRefs: [],
    allApplications: true,
    ...extra,
  };
}

function errors(d: Draft): string[] {
  const sink: Sink = { errors: [], warnings: [] };
  validate(d, sink);
  return sink.errors;
}

Deno.test("validate resolves pool references against every declared pool", () => {
  assert.deepEqual(
    errors(draft({
      poolRefs: [{ pool: "api", path: "a.pool" }, { pool: "gone", path: "b.pool" }],
    })),
    ['b.pool: unknown pool "gone"'],
  );
});

Deno.test("validate checks default_host only when every application's domains are known", () => {
  const d = draft({ server: server({ default_host: "other.example" }) });
  assert.deepEqual(errors(d), [
    'server.default_host: "other.example" is not a domain of any application',
  ]);
  assert.deepEqual(errors({ ...d, allApplications: false }), []);
  assert.deepEqual(errors(draft({ server: server({ default_host: "example.com" }) })), []);
});

Deno.test("validate finds listen address conflicts across listeners, admin and metrics", () => {
  const d = draft({
    server: server({
      listeners: [
        { name: "a", address: "[::1]:80", hostname: "::1", port: 80 },
        { name: "b", address: "[::1]:0", hostname: "::1", port: 0 },
        { name: "c", address: "[::1]:0", hostname: "::1", port: 0 },
      ],
      admin: { http: { address: "[::1]:80", hostname: "::1", port: 80, writes: false } },
      metrics: { address: "127.0.0.1:81", hostname: "127.0.0.1", port: 81 },
    }),
  });
  assert.deepEqual(errors(d), [
    "server.admin.http.address: address [::1]:80 is already used by server.listeners[0].address",
  ]);
});

Deno.test("validate: tls.acme needs state_dir, and without a plain listener it warns", () => {
  const acme = { directory: "https://ca.test/dir", domains: ["example.com"] };
  const tlsOnly = server({
    listeners: [{
      name: "https",
      address: "0.0.0.0:443",
      hostname: "0.0.0.0",
      port: 443,
      tls: { certificates: [], acme, handshake_timeout: 1, strict_sni: true, unknown_sni: "first" },
    }],
  });
  const sink: Sink = { errors: [], warnings: [] };
  validate(draft({ server: tlsOnly }), sink);
  assert.deepEqual(sink.errors, [
    "server.listeners[0].tls.acme: needs server.state_dir (where the account and certificates are kept)",
  ]);
  assert.deepEqual(sink.warnings, [
    "server.listeners[0].tls.acme: no plain listener answers the CA's HTTP-01 challenges (port 80)",
  ]);
  const both = server({
    state_dir: "/var/lib/scalws",
    listeners: [server().listeners[0], tlsOnly.listeners[0]],
  });
  const ok: Sink = { errors: [], warnings: [] };
  validate(draft({ server: both }), ok);
  assert.deepEqual(ok, { errors: [], warnings: [] });
});
