import assert from "node:assert/strict";
import { parseUnit } from "./issues.ts";
import type { Sink } from "./provision_draft.ts";
import { DEFAULT_MAX_BODY, limitReq, provisionServer } from "./provision_server.ts";
import { serverSchema } from "./schema.ts";

function server(value: unknown) {
  const sink: Sink = { errors: [], warnings: [] };
  const raw = parseUnit(serverSchema, value, ["server"], sink.errors);
  assert.ok(raw, sink.errors.join("\n"));
  return { config: provisionServer(raw, sink), sink };
}

Deno.test("provisionServer: TLS defaults, body limit default, limit_req burst 0", () => {
  const { config, sink } = server({
    listeners: [{
      name: "https",
      address: "127.0.0.1:443",
      tls: { certificates: [{ cert: "c.pem", key: "k.pem" }] },
    }],
    limit_req: { rate: 10 },
  });
  assert.deepEqual(sink.errors, []);
  assert.deepEqual(config.listeners[0].tls, {
    certificates: [{ cert: "c.pem", key: "k.pem" }],
    handshake_timeout: 10_000,
    strict_sni: true,
    unknown_sni: "first",
  });
  assert.equal(config.max_body, DEFAULT_MAX_BODY);
  assert.deepEqual(config.limit_req, { rate: 10, burst: 0 });
  assert.deepEqual(limitReq({ rate: 5, burst: 2 }), { rate: 5, burst: 2 });
});

Deno.test("provisionServer: the admin HTTP listener must be loopback", () => {
  const { sink } = server({
    listeners: [{ name: "http", address: "127.0.0.1:80" }],
    admin: { http: { address: "0.0.0.0:9000" } },
  });
  assert.deepEqual(sink.errors, [
    "server.admin.http.address: must be a loopback address (127.0.0.0/8, ::1 or localhost)",
  ]);
});

Deno.test("provisionServer: tls.acme alone, and beside certificates", () => {
  const acme = {
    directory: "https://127.0.0.1:14000/dir",
    email: "ops@example.com",
    domains: ["A.example.com", "b.example.com"],
    ca_file: "/etc/ca.pem",
  };
  const { config, sink } = server({
    listeners: [
      { name: "a", address: "127.0.0.1:443", tls: { acme } },
      {
        name: "b",
        address: "127.0.0.1:444",
        tls: {
          acme: { directory: acme.directory, domains: ["c.test"] },
          certificates: [{ cert: "c.pem", key: "k.pem" }],
        },
      },
    ],
  });
  assert.deepEqual(sink.errors, []);
  assert.deepEqual(config.listeners[0].tls, {
    certificates: [],
    acme: { ...acme, domains: ["a.example.com", "b.example.com"] },
    handshake_timeout: 10_000,
    strict_sni: true,
    unknown_sni: "first",
  });
  assert.deepEqual(config.listeners[1].tls?.acme, {
    directory: acme.directory,
    domains: ["c.test"],
  });
  assert.equal(config.listeners[1].tls?.certificates.length, 1);
});

Deno.test("provisionServer: limits_store and tracing defaults (issue 28)", () => {
  const { config, sink } = server({
    listeners: [{ name: "http", address: "127.0.0.1:80" }],
    limits_store: { redis: { address: "unix:/run/redis/redis.sock" } },
    tracing: { endpoint: "http://127.0.0.1:4318/v1/traces" },
  });
  assert.deepEqual(sink.errors, []);
  const store = config.limits_store!;
  assert.equal(store.redis.address.canonical, "unix:/run/redis/redis.sock");
  assert.equal(store.redis.key_prefix, "scalws:");
  assert.equal(store.redis.timeout, 50);
  assert.equal(store.on_error, "local");
  assert.deepEqual(config.tracing, {
    endpoint: "http://127.0.0.1:4318/v1/traces",
    sample_ratio: 1,
    service_name: "scalwsd",
    headers: {},
    trust_client: false,
    queue_size: 2048,
  });
  const given = server({
    listeners: [{ name: "http", address: "127.0.0.1:80" }],
    limits_store: {
      redis: { address: "127.0.0.1:6379", key_prefix: "shop:", timeout: "20ms" },
      on_error: "deny",
    },
  }).config.limits_store!;
  assert.equal(given.redis.address.canonical, "127.0.0.1:6379");
  assert.deepEqual([given.redis.key_prefix, given.redis.timeout, given.on_error], [
    "shop:",
    20,
    "deny",
  ]);
});
