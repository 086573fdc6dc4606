/** `members_from: dns` with `dns`, `server.resolver` and `server.state_dir`. */
import assert from "node:assert/strict";
import { ConfigError } from "./errors.ts";
import { parseConfig } from "./load.ts";

function doc(pool: unknown, server: Record<string, unknown> = {}): string {
  return JSON.stringify({
    server: { listeners: [{ name: "http", address: "127.0.0.1:8080" }], ...server },
    upstreams: { api: pool },
    tenants: [{
      name: "t",
      applications: [{
        name: "a",
        domains: ["a.test"],
        runtime: { type: "proxy", upstream: { pool: "api" } },
      }],
    }],
  });
}

function errorsOf(text: string): readonly string[] {
  try {
    parseConfig(text, "scalws.yaml");
  } catch (e) {
    if (e instanceof ConfigError) return e.errors;
    throw e;
  }
  assert.fail("the configuration was accepted");
}

Deno.test("dns: defaults of a members_from: dns pool, resolver and state_dir", () => {
  const { config } = parseConfig(
    doc(
      { members_from: "dns", dns: { name: "API.Internal.", port: 8080 } },
      { resolver: "127.0.0.1:5353", state_dir: "/var/lib/scalws" },
    ),
    "scalws.yaml",
  );
  assert.deepEqual(config.upstreams.api.dns, {
    name: "api.internal",
    type: "A",
    port: 8080,
    refresh: "ttl",
    min_refresh: 1_000,
    max_refresh: 300_000,
    grace: 60_000,
  });
  assert.deepEqual(config.upstreams.api.members, []);
  assert.deepEqual(config.server.resolver, {
    address: "127.0.0.1:5353",
    hostname: "127.0.0.1",
    port: 5353,
  });
  assert.equal(config.server.state_dir, "/var/lib/scalws");
  const srv = parseConfig(
    doc(
      {
        members_from: "dns",
        dns: { name: "_http._tcp.api", type: "SRV", refresh: "30s", grace: "0s" },
      },
      { resolver: "::1" },
    ),
    "scalws.yaml",
  ).config;
  assert.equal(srv.upstreams.api.dns!.refresh, 30_000);
  assert.equal(srv.upstreams.api.dns!.grace, 0);
  assert.deepEqual(srv.server.resolver, { address: "::1", hostname: "::1", port: 53 });
});

Deno.test("dns: errors name their path", () => {
  const P = "upstreams.api";
  assert.deepEqual(errorsOf(doc({ members_from: "dns" })), [
    `${P}.dns: is required with members_from: dns`,
  ]);
  assert.deepEqual(errorsOf(doc({ members_from: "api", dns: { name: "a" } })), [
    `${P}.dns: only allowed with members_from: dns`,
  ]);
  assert.deepEqual(
    errorsOf(doc({ members_from: "dns", members: [], dns: { name: "a", type: "AAAA" } })),
    [
      `${P}.members: not allowed with members_from: dns`,
      `${P}.dns.port: is required with type: AAAA`,
    ],
  );
  assert.deepEqual(
    errorsOf(doc({ members_from: "dns", dns: { name: "a", type: "SRV", port: 1 } })),
    [`${P}.dns.port: not used with type: SRV (answers carry the port)`],
  );
  assert.deepEqual(
    errorsOf(doc({ members_from: "dns", dns: { name: "a", port: 1, min_refresh: "10m" } })),
    [`${P}.dns.min_refresh: must not be above max_refresh`],
  );
  assert.deepEqual(
    errorsOf(doc({ members_from: "dns", dns: { name: "a", port: 1, refresh: "1h" } })),
    [`${P}.dns.refresh: must be between min_refresh and max_refresh`],
  );
  const many = errorsOf(
    doc({ members_from: "dns", dns: { name: "a b", port: 0, refresh: "soon", type: "MX", x: 1 } }),
  );
  assert.ok(
    many.some((e) => e.startsWith(`${P}.dns.name: invalid DNS name "a b"`)),
    many.join("\n"),
  );
  assert.ok(many.some((e) => e.startsWith(`${P}.dns.refresh: `)), many.join("\n"));
  assert.ok(many.some((e) => e.startsWith(`${P}.dns.type: `)), many.join("\n"));
  assert.ok(many.some((e) => e.includes('unknown key "x"')), many.join("\n"));
  assert.deepEqual(
    errorsOf(doc({ members: [] }, { resolver: "dns.example:53" })),
    ['server.resolver: invalid resolver "dns.example:53": host must be an IP address'],
  );
});
