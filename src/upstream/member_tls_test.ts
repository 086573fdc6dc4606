import assert from "node:assert/strict";
import { parseConfig } from "../config/load.ts";
import type { AddressTarget, Config, ProxyRuntime } from "../config/types.ts";
import { createMetrics } from "../observe/families.ts";
import { AffinityKey } from "./affinity.ts";
import { systemClock } from "../base/clock.ts";
import { addressTls, poolTls } from "./member_tls.ts";
import { Pool } from "./pool.ts";

const CA = "-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n";

function config(upstreams: string, runtime = "upstream: {pool: plain}"): Config {
  return parseConfig(
    `
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
upstreams:
  plain:
    members: [{address: "127.0.0.1:8080"}]
${upstreams}
tenants:
  - name: t
    applications:
      - {name: a, domains: [a.test], runtime: {type: proxy, ${runtime}}}
`,
    "scalws.yaml",
  ).config;
}

/** A reader that serves `CA` for every path and records what it was asked for. */
function recorder(): { read: (path: string) => string; paths: string[] } {
  const paths: string[] = [];
  return { read: (path) => (paths.push(path), CA), paths };
}

function addressOf(cfg: Config): { target: AddressTarget; runtime: ProxyRuntime } {
  const runtime = cfg.tenants[0].applications[0].runtime as ProxyRuntime;
  return { target: runtime.target as AddressTarget, runtime };
}

Deno.test("poolTls gives no TLS to an http pool and reads nothing", () => {
  const r = recorder();
  assert.equal(poolTls(config("").upstreams.plain, r.read), null);
  assert.deepEqual(r.paths, []);
});

Deno.test("poolTls reads tls.ca_file once and uses tls.server_name", () => {
  const cfg = config(`
  p:
    scheme: https
    members: [{address: "127.0.0.1:8443"}]
    tls: {ca_file: /etc/ca.pem, server_name: api.internal}
`);
  const r = recorder();
  assert.deepEqual(poolTls(cfg.upstreams.p, r.read), { caCerts: [CA], serverName: "api.internal" });
  assert.deepEqual(r.paths, ["/etc/ca.pem"]);
});

Deno.test("poolTls without tls verifies against the system roots under the member's host", () => {
  const cfg = config(`
  p:
    scheme: https
    members: [{address: "127.0.0.1:8443"}]
`);
  const r = recorder();
  // "" is the connector's "use the member's host"; the connector adds the system roots.
  assert.deepEqual(poolTls(cfg.upstreams.p, r.read), { caCerts: [], serverName: "" });
  assert.deepEqual(r.paths, []);
});

Deno.test("poolTls passes on the reader's error", () => {
  const cfg = config(`
  p:
    scheme: https
    members: [{address: "127.0.0.1:8443"}]
    tls: {ca_file: /missing.pem}
`);
  assert.throws(
    () =>
      poolTls(cfg.upstreams.p, (path) => {
        throw new Error(`cannot open ${path}`);
      }),
    { message: "cannot open /missing.pem" },
  );
});

Deno.test("addressTls reads tls_ca_file for https:// and names the address's host", () => {
  const { target, runtime } = addressOf(
    config("", 'upstream: "https://api.internal:8443", tls_ca_file: /etc/ca.pem'),
  );
  const r = recorder();
  assert.deepEqual(addressTls(target, runtime, r.read), { caCerts: [CA], serverName: "" });
  assert.deepEqual(r.paths, ["/etc/ca.pem"]);
});

Deno.test("addressTls gives no TLS to http:// and unix: targets", () => {
  const r = recorder();
  for (const url of ["http://127.0.0.1:8080", "unix:/run/app.sock"]) {
    const { target, runtime } = addressOf(config("", `upstream: "${url}"`));
    assert.equal(addressTls(target, runtime, r.read), null);
  }
  assert.deepEqual(r.paths, []);
});

Deno.test("a Pool reads its CA file once, shared by its members and later ones", () => {
  const cfg = config(`
  p:
    scheme: https
    members: [{address: "127.0.0.1:8443"}, {address: "127.0.0.1:8444"}, {address: "127.0.0.1:8445"}]
    tls: {ca_file: /etc/ca.pem}
`);
  const r = recorder();
  const pool = new Pool({
    settings: cfg.upstreams.p,
    deps: { metrics: createMetrics(), key: new AffinityKey(), clock: systemClock },
    readPem: r.read,
    idleTimeout: 60_000,
  });
  assert.equal(pool.set.members.length, 3);
  const more = config(`
  p:
    scheme: https
    members: [{address: "127.0.0.1:8446"}, {address: "127.0.0.1:8447"}]
    tls: {ca_file: /etc/ca.pem}
`).upstreams.p.members;
  pool.install(pool.plan(more), more);
  assert.equal(pool.set.members.length, 2);
  assert.deepEqual(r.paths, ["/etc/ca.pem"]);
  pool.retire();
});
