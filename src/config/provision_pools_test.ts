import assert from "node:assert/strict";
import { parseUnit } from "./issues.ts";
import type { Draft, Sink } from "./provision_draft.ts";
import { provisionPool, provisionUpstreams } from "./provision_pools.ts";
import { poolSchema } from "./schema.ts";

function pool(name: string, value: unknown) {
  const sink: Sink = { errors: [], warnings: [] };
  const raw = parseUnit(poolSchema, value, ["upstreams", name], sink.errors);
  assert.ok(raw, sink.errors.join("\n"));
  return { config: provisionPool(name, raw, sink), sink };
}

Deno.test("provisionPool: dns defaults, a trailing dot dropped", () => {
  const { config, sink } = pool("api", {
    members_from: "dns",
    dns: { name: "api.example.", port: 8080 },
  });
  assert.deepEqual(sink.errors, []);
  assert.deepEqual(config?.dns, {
    name: "api.example",
    type: "A",
    port: 8080,
    refresh: "ttl",
    min_refresh: 1_000,
    max_refresh: 300_000,
    grace: 60_000,
  });
});

Deno.test("provisionPool: every rule between fields is reported at once", () => {
  const { config, sink } = pool("api", {
    members: [{ address: "127.0.0.1:1" }],
    balance: "hash",
    hash: { by: "header" },
    dns: { name: "x", port: 1 },
    tls: { ca_file: "ca.pem" },
  });
  assert.equal(config, undefined);
  assert.deepEqual(sink.errors, [
    "upstreams.api.dns: only allowed with members_from: dns",
    "upstreams.api.hash.name: is required with by: header",
    "upstreams.api.tls: only allowed with scheme: https",
  ]);
});

Deno.test("provisionPool: the sticky cookie is named after the pool and differs from the hash cookie", () => {
  assert.deepEqual(pool("web", { sticky: { ttl: "1m" } }).config?.sticky, {
    ttl: 60_000,
    cookie: "SCALWS_STICKY_web",
  });
  const { sink } = pool("web", {
    balance: "hash",
    hash: { by: "cookie" },
    sticky: { ttl: "1m", cookie: "SCALWS_AFFINITY" },
  });
  assert.deepEqual(sink.errors, [
    'upstreams.web.sticky.cookie: must differ from hash.name "SCALWS_AFFINITY"',
  ]);
});

Deno.test("provisionUpstreams keeps every declared name, valid or not", () => {
  const sink: Sink = { errors: [], warnings: [] };
  const draft: Draft = {
    pools: new Map(),
    poolNames: new Set(),
    tenants: [],
    poolRefs: [],
    allApplications: true,
  };
  provisionUpstreams({ ok: {}, bad: { retries: -1 } }, draft, sink);
  assert.deepEqual([...draft.poolNames], ["ok", "bad"]);
  assert.deepEqual([...draft.pools.keys()], ["ok"]);
  assert.ok(sink.errors.length > 0 && sink.errors.every((e) => e.startsWith("upstreams.bad")));
});

Deno.test("provisionPool: FastCGI members take max_conns, the pool max_queue (default 256)", () => {
  const { config, sink } = pool("fpm", {
    protocol: "fastcgi",
    members: [{ address: "127.0.0.1:9000", max_conns: 4 }, { address: "127.0.0.1:9001" }],
  });
  assert.deepEqual(sink.errors, []);
  assert.equal(config?.max_queue, 256);
  assert.equal(config?.members[0].max_conns, 4);
  assert.equal(config?.members[1].max_conns, undefined);
  assert.equal(pool("fpm", { protocol: "fastcgi", max_queue: 0 }).config?.max_queue, 0);
  const http = pool("web", {
    max_queue: 5,
    members: [{ address: "127.0.0.1:80", max_conns: 4 }],
  });
  assert.equal(http.config, undefined);
  assert.deepEqual(http.sink.errors, [
    "upstreams.web.max_queue: only allowed with protocol: fastcgi",
    "upstreams.web.members[0].max_conns: only allowed with protocol: fastcgi",
  ]);
});

Deno.test("provisionPool: keepalive on a FastCGI pool loads with a warning (a connection per request)", () => {
  const { config, sink } = pool("fpm", {
    protocol: "fastcgi",
    keepalive: 8,
    members: [{ address: "127.0.0.1:9000" }],
  });
  assert.ok(config !== undefined);
  assert.deepEqual(sink.errors, []);
  assert.deepEqual(sink.warnings, [
    "upstreams.fpm.keepalive: not used with protocol: fastcgi (a connection per request, closed at its end)",
  ]);
});
