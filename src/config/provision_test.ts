import assert from "node:assert/strict";
import { provision, type Sink } from "./provision.ts";
import { POOL_DEFAULTS, SERVER_DEFAULTS } from "./_test_defaults.ts";

function run(data: unknown) {
  const sink: Sink = { errors: [], warnings: [] };
  const draft = provision(data, sink);
  return { draft, sink };
}

const SERVER = { listeners: [{ name: "http", address: "127.0.0.1:80" }] };

Deno.test("provision fills server defaults", () => {
  const { draft, sink } = run({ server: SERVER });
  assert.deepEqual(sink, { errors: [], warnings: [] });
  assert.deepEqual(draft.server, {
    listeners: [{ name: "http", address: "127.0.0.1:80", hostname: "127.0.0.1", port: 80 }],
    ...SERVER_DEFAULTS,
  });
});

Deno.test("provision fills pool defaults and warns about an empty file pool only", () => {
  const { draft, sink } = run({
    server: SERVER,
    upstreams: { empty: {}, seeded: { members_from: "api" }, s: { sticky: { ttl: "1m" } } },
  });
  assert.deepEqual(sink.errors, []);
  assert.deepEqual(sink.warnings, [
    "upstreams.empty.members: pool has no members; requests get 503",
    "upstreams.s.members: pool has no members; requests get 503",
  ]);
  assert.deepEqual(draft.pools.get("empty"), {
    name: "empty",
    members: [],
    ...POOL_DEFAULTS,
  });
  assert.deepEqual(draft.pools.get("s")?.sticky, { ttl: 60_000, cookie: "SCALWS_STICKY_s" });
  assert.deepEqual([...draft.poolNames], ["empty", "seeded", "s"]);
});

Deno.test("provision records pool references with their paths", () => {
  const { draft, sink } = run({
    server: SERVER,
    tenants: [{
      name: "t",
      applications: [{
        name: "a",
        domains: ["a.example"],
        proxy: { upstream: { pool: "p1" } },
        routes: [{ path: "/x", runtime: { type: "proxy", backends: [{ pool: "p2", weight: 3 }] } }],
      }],
    }],
  });
  assert.deepEqual(sink.errors, []);
  assert.deepEqual(draft.poolRefs, [
    { pool: "p1", path: "tenants[0].applications[0].proxy.upstream.pool", protocol: "http" },
    {
      pool: "p2",
      path: "tenants[0].applications[0].routes[0].runtime.backends[0].pool",
      protocol: "http",
    },
  ]);
  const app = draft.tenants[0].applications[0];
  assert.equal(app.path, "tenants[0].applications[0]");
  assert.deepEqual(app.config?.routes[0].runtime, {
    type: "proxy",
    target: { kind: "backends", backends: [{ pool: "p2", weight: 3 }] },
    preserve_host: false,
    connect_timeout: 5_000,
    response_timeout: 60_000,
    websocket: false,
  });
});

Deno.test("provision checks applications of a broken tenant and runtimes of a broken application", () => {
  const { draft, sink } = run({
    server: SERVER,
    tenants: [{
      name: "t",
      extra: 1,
      applications: [{
        name: "a",
        domains: ["a.example"],
        extra: 2,
        runtime: { type: "respond", status: 99 },
        routes: [{ path: "/x", extra: 3, proxy: { upstream: "ftp://h" } }],
      }],
    }],
  });
  assert.deepEqual(sink.errors, [
    'tenants[0]: unknown key "extra"',
    'tenants[0].applications[0]: unknown key "extra"',
    "tenants[0].applications[0].runtime.status: must be between 100 and 599",
    'tenants[0].applications[0].routes[0]: unknown key "extra"',
    'tenants[0].applications[0].routes[0].proxy.upstream: invalid upstream "ftp://h": unsupported scheme "ftp", use http://, https:// or unix:',
  ]);
  assert.equal(draft.allApplications, false);
  assert.equal(draft.tenants[0].name, undefined);
});

Deno.test("provision checks the members of a pool whose other keys are broken", () => {
  const { sink } = run({
    server: SERVER,
    upstreams: { p: { balance: "x", members: [{ address: "h" }] } },
  });
  assert.deepEqual(sink.errors, [
    'upstreams.p.balance: invalid value "x"; must be one of round_robin, least_conn, hash, failover',
    'upstreams.p.members[0].address: invalid address "h": port is required',
  ]);
});

Deno.test("provision drops client on pool routes with a warning and keeps it on addresses", () => {
  const { draft, sink } = run({
    server: SERVER,
    tenants: [{
      name: "t",
      applications: [{
        name: "a",
        domains: ["a.example"],
        proxy: { upstream: "http://h", client: { keepalive: 0 } },
        routes: [{
          path: "/p",
          proxy: { upstream: { pool: "p" }, client: { idle_timeout: "5s" } },
        }],
      }],
    }],
  });
  assert.deepEqual(sink.errors, []);
  assert.deepEqual(sink.warnings, [
    "tenants[0].applications[0].routes[0].proxy.client: ignored on pool routes; pools use server.upstream_client",
  ]);
  const config = draft.tenants[0].applications[0].config!;
  assert.ok(config.runtime.type === "proxy");
  assert.deepEqual(config.runtime.client, { keepalive: 0 });
  assert.equal("client" in config.routes[0].runtime, false);
});

Deno.test("provision treats an empty document as an empty mapping", () => {
  assert.deepEqual(run(null).sink.errors, ["server.listeners: at least one listener is required"]);
  assert.deepEqual(run("text").sink.errors, ["(root): must be a mapping"]);
});
