import assert from "node:assert/strict";
import { parseConfig } from "../src/config/load.ts";

Deno.test("server.upstream_client: defaults, and the guide's warning for client on a pool route", () => {
  const { config, warnings } = parseConfig(
    `
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
  upstream_client: {keepalive: 8, idle_timeout: 30s}
upstreams:
  api: {members: [{address: "127.0.0.1:9"}]}
tenants:
  - name: t
    applications:
      - name: a
        domains: [a.test]
        proxy: {upstream: {pool: api}, client: {keepalive: 4}}
        routes:
          - {path: /one, proxy: {upstream: "http://127.0.0.1:9", client: {keepalive: 2}}}
`,
    "scalws.yaml",
  );
  assert.deepEqual(config.server.upstream_client, { keepalive: 8, idle_timeout: 30_000 });
  assert.deepEqual(warnings, [
    "tenants[0].applications[0].proxy.client: ignored on pool routes; pools use server.upstream_client",
  ]);
  const defaults = parseConfig(
    `server: {listeners: [{name: http, address: "127.0.0.1:0"}]}`,
    "scalws.yaml",
  );
  assert.deepEqual(defaults.config.server.upstream_client, { keepalive: 32, idle_timeout: 60_000 });
});
