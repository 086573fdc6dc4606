import assert from "node:assert/strict";
import { parseUnit } from "./issues.ts";
import {
  applicationSchema,
  poolSchema,
  proxyShorthandSchema,
  routeSchema,
  runtimeSchema,
  serverSchema,
  tenantSchema,
} from "./schema.ts";

function parse(schema: Parameters<typeof parseUnit>[0], value: unknown) {
  const errors: string[] = [];
  const data = parseUnit(schema, value, ["x"], errors);
  return { data, errors };
}

Deno.test("serverSchema parses addresses, sizes and durations and applies no defaults", () => {
  const { data, errors } = parse(serverSchema, {
    listeners: [{ name: "http", address: "[::1]:8080" }],
    max_body: "64KiB",
    upstream_client: { idle_timeout: "1m" },
  });
  assert.deepEqual(errors, []);
  assert.deepEqual(data, {
    listeners: [{ name: "http", address: { address: "[::1]:8080", hostname: "::1", port: 8080 } }],
    max_body: 65_536,
    upstream_client: { idle_timeout: 60_000 },
  });
});

Deno.test("poolSchema leaves members alone and converts durations", () => {
  const members = [{ address: "anything", bogus: true }];
  const { data, errors } = parse(poolSchema, {
    members,
    passive_health: { cooldown: "1h" },
    sticky: { ttl: "3d" },
    health_check: { path: "/ping?full=1", interval: "1.5s" },
  });
  assert.deepEqual(errors, []);
  assert.equal((data as { members: unknown }).members, members);
  assert.deepEqual((data as { passive_health: unknown }).passive_health, { cooldown: 3_600_000 });
  assert.deepEqual((data as { sticky: unknown }).sticky, { ttl: 259_200_000 });
  assert.deepEqual((data as { health_check: unknown }).health_check, {
    path: "/ping?full=1",
    interval: 1_500,
  });
});

Deno.test("runtimeSchema picks the shape by type", () => {
  assert.deepEqual(parse(runtimeSchema, { type: "static", root: "/srv" }).data, {
    type: "static",
    root: "/srv",
  });
  assert.deepEqual(parse(runtimeSchema, { type: "proxy", upstream: { pool: "api" } }).data, {
    type: "proxy",
    upstream: { pool: "api" },
  });
  assert.deepEqual(parse(runtimeSchema, { type: "static", root: "/", status: 200 }).errors, [
    'x: unknown key "status"',
  ]);
  assert.deepEqual(parse(runtimeSchema, { type: 5 }).errors, [
    "x.type: unknown type 5; must be one of proxy, respond, static, php, app, node, python, deno",
  ]);
});

Deno.test("the proxy shorthand has no type", () => {
  assert.deepEqual(parse(proxyShorthandSchema, { type: "proxy", upstream: "http://h" }).errors, [
    'x: unknown key "type"',
  ]);
  const url = parse(proxyShorthandSchema, { upstream: "http://h:8080" }).data as {
    upstream: { kind: string; authority: string };
  };
  assert.equal(url.upstream.kind, "address");
  assert.equal(url.upstream.authority, "h:8080");
});

Deno.test("application, route and tenant schemas leave nested units to be parsed alone", () => {
  const runtime = { type: "nonsense" };
  const app = parse(applicationSchema, {
    name: "www",
    domains: ["Example.COM"],
    runtime,
    routes: [{ any: 1 }],
  });
  assert.deepEqual(app.errors, []);
  assert.deepEqual(app.data, {
    name: "www",
    domains: ["example.com"],
    runtime,
    routes: [{ any: 1 }],
  });
  assert.deepEqual(parse(routeSchema, { path: "/a//b/", proxy: 1 }).data, {
    path: "/a/b",
    proxy: 1,
  });
  assert.deepEqual(parse(tenantSchema, { name: "acme", applications: [1] }).data, {
    name: "acme",
    applications: [1],
  });
});
