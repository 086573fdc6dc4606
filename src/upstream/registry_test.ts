import assert from "node:assert/strict";
import { systemClock } from "../base/clock.ts";
import { parseConfig } from "../config/load.ts";
import type { Config } from "../config/types.ts";
import { createMetrics } from "../observe/families.ts";
import { AffinityKey } from "./affinity.ts";
import { PoolRegistry } from "./registry.ts";

function config(idle: string, upstream = "http://127.0.0.1:9000"): Config {
  return parseConfig(
    `
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
  upstream_client: {idle_timeout: ${idle}}
upstreams:
  p: {members: [{address: "127.0.0.1:9001"}]}
tenants:
  - name: t
    applications:
      - name: a
        domains: [a.test]
        runtime: {type: proxy, upstream: "${upstream}"}
        routes: [{path: /p, runtime: {type: proxy, upstream: {pool: p}}}]
`,
    "scalws.yaml",
  ).config;
}

function registry(): PoolRegistry {
  return new PoolRegistry({ metrics: createMetrics(), key: new AffinityKey(), clock: systemClock });
}

const readPem = () => "";

Deno.test("PoolRegistry: a discarded plan leaves the idle timeout of later members unchanged", () => {
  const r = registry();
  r.commit(r.plan(config("30s"), { readPem }));
  const pool = r.pools.get("p")!;
  assert.equal(pool.idleTimeout, 30_000);
  assert.equal(pool.set.members[0].conns.idleTimeout, 30_000);
  r.discard(r.plan(config("5s"), { readPem }));
  assert.equal(pool.idleTimeout, 30_000, "a refused reload changes nothing");
  const next = r.plan(config("5s"), { readPem });
  assert.equal(next.pools.get("p"), pool, "same settings: the pool is kept");
  r.commit(next);
  assert.equal(pool.idleTimeout, 5_000, "members added from now on use the new value");
  assert.equal(pool.set.members[0].conns.idleTimeout, 30_000, "existing members keep theirs");
  r.closeAll();
});

Deno.test("PoolRegistry: single addresses keep their connections while their key stays", () => {
  const r = registry();
  r.commit(r.plan(config("30s"), { readPem }));
  const first = [...r.addresses.values()];
  assert.equal(first.length, 1);
  r.commit(r.plan(config("30s"), { readPem }));
  assert.deepEqual([...r.addresses.values()], first, "kept across a reload");
  r.commit(r.plan(config("30s", "http://127.0.0.1:9100"), { readPem }));
  const now = [...r.addresses.values()];
  assert.equal(now.length, 1);
  assert.notEqual(now[0], first[0], "another target: new connections, the old ones closed");
  r.closeAll();
});
