import assert from "node:assert/strict";
import { DEFAULT_BACKEND_DOMAIN, ingressConfig, nameOf } from "./ingress_config.ts";

const meta = (namespace: string, name: string, extra: Record<string, unknown> = {}) => ({
  namespace,
  name,
  ...extra,
});

Deno.test("ingressConfig: annotations, TLS secrets, IPv6 endpoints, a host claimed twice", () => {
  const c = ingressConfig({
    ingresses: [
      {
        metadata: meta("a", "site", {
          annotations: { "scalwsd.io/affinity": "cookie", "scalwsd.io/backend-protocol": "HTTPS" },
        }),
        spec: {
          ingressClassName: "scalwsd",
          tls: [{ hosts: ["www.test"], secretName: "cert" }, {
            hosts: ["x.test"],
            secretName: "nope",
          }],
          rules: [{
            host: "WWW.test",
            http: {
              paths: [
                { path: "/", backend: { service: { name: "web", port: { name: "https" } } } },
                { path: "/gone/", backend: { service: { name: "missing", port: { number: 1 } } } },
              ],
            },
          }],
        },
      },
      {
        metadata: meta("b", "steal"),
        spec: {
          ingressClassName: "scalwsd",
          rules: [{
            host: "www.test",
            http: {
              paths: [{ path: "/", backend: { service: { name: "web", port: { number: 443 } } } }],
            },
          }],
        },
      },
    ],
    services: [{ metadata: meta("a", "web"), spec: { ports: [{ name: "https", port: 443 }] } }],
    endpointSlices: [{
      metadata: meta("a", "web-1", { labels: { "kubernetes.io/service-name": "web" } }),
      ports: [{ name: "https", port: 8443 }],
      endpoints: [
        { addresses: ["2001:db8::5"], conditions: { ready: true } },
        { addresses: ["10.0.0.9"], conditions: { ready: true, terminating: true } },
      ],
    }],
    secrets: [{
      metadata: meta("a", "cert"),
      data: { "tls.crt": btoa("CERT"), "tls.key": btoa("KEY") },
    }],
  });
  assert.deepEqual(c.upstreams, {
    p_a_web_443: { members_from: "api", balance: "hash", hash: { by: "cookie" }, scheme: "https" },
  });
  assert.deepEqual(c.tenants, [{
    name: "k_a",
    applications: [{
      name: "h_www-test",
      domains: ["www.test"],
      runtime: { type: "proxy", upstream: { pool: "p_a_web_443" } },
    }],
  }]);
  assert.deepEqual(c.members.get("p_a_web_443"), [{ address: "[2001:db8::5]:8443", weight: 1 }]);
  assert.deepEqual(c.certificates, [{
    id: "a_cert",
    cert: "CERT",
    key: "KEY",
    domains: ["www.test"],
  }]);
  assert.deepEqual(c.warnings, [
    'ingress a/site: no service "missing"',
    'ingress a/site: TLS secret "nope" unusable',
    "ingress b/steal: host www.test belongs to namespace a",
  ]);
});

Deno.test("nameOf keeps names within 63 characters with a stable hash", () => {
  assert.equal(nameOf("p", "shop", "web", "80"), "p_shop_web_80");
  const long = nameOf("p", "n".repeat(60), "s".repeat(60), "8080");
  assert.equal(long.length, 63);
  assert.equal(long, nameOf("p", "n".repeat(60), "s".repeat(60), "8080"));
  assert.notEqual(long, nameOf("p", "n".repeat(60), "s".repeat(60), "8081"));
});

Deno.test("ingressConfig: Exact paths, rules without a host and defaultBackend make the catch-all", () => {
  const svc = (name: string) => ({
    metadata: meta("a", name),
    spec: { ports: [{ name: "http", port: 80 }] },
  });
  const to = (name: string) => ({ service: { name, port: { number: 80 } } });
  const c = ingressConfig({
    ingresses: [
      {
        metadata: meta("a", "first"),
        spec: {
          ingressClassName: "scalwsd",
          defaultBackend: to("fallback"),
          rules: [
            {
              host: "shop.test",
              http: {
                paths: [
                  { path: "/api", pathType: "Exact", backend: to("api") },
                  { path: "/api", pathType: "Prefix", backend: to("web") },
                  { path: "/", pathType: "Exact", backend: to("home") },
                ],
              },
            },
            { http: { paths: [{ path: "/health", pathType: "Prefix", backend: to("web") }] } },
          ],
        },
      },
      {
        metadata: meta("a", "second"),
        spec: { ingressClassName: "scalwsd", defaultBackend: to("web") },
      },
    ],
    services: [svc("api"), svc("web"), svc("home"), svc("fallback")],
    endpointSlices: [],
    secrets: [],
  });
  const proxy = (svc: string) => ({ type: "proxy", upstream: { pool: `p_a_${svc}_80` } });
  assert.deepEqual(c.tenants, [{
    name: "k_a",
    applications: [
      {
        name: "default_backend",
        domains: [DEFAULT_BACKEND_DOMAIN],
        runtime: proxy("fallback"),
        routes: [{ path: "/health", runtime: proxy("web") }],
      },
      {
        name: "h_shop-test",
        domains: ["shop.test"],
        // No Prefix "/": the paths without a rule go to the default backend.
        runtime: proxy("fallback"),
        routes: [
          { path: "/", exact: true, runtime: proxy("home") },
          { path: "/api", exact: true, runtime: proxy("api") },
          { path: "/api", runtime: proxy("web") },
        ],
      },
    ],
  }]);
  assert.equal(c.defaultHost, DEFAULT_BACKEND_DOMAIN);
  assert.deepEqual(c.warnings, ["ingress a/second: defaultBackend ignored, a's comes first"]);

  const none = ingressConfig({
    ingresses: [{
      metadata: meta("a", "only"),
      spec: {
        ingressClassName: "scalwsd",
        rules: [{ host: "x.test", http: { paths: [{ path: "/a", backend: to("web") }] } }],
      },
    }],
    services: [svc("web")],
    endpointSlices: [],
    secrets: [],
  });
  assert.equal(none.defaultHost, undefined);
  assert.deepEqual(
    (none.tenants[0].applications as { runtime: unknown }[])[0].runtime,
    { type: "respond", status: 404, body: "no route\n" },
  );
});

Deno.test("ingressConfig: ingress-nginx annotations become policies, routes and warnings", () => {
  const N = "nginx.ingress.kubernetes.io/";
  const c = ingressConfig({
    tlsServed: true,
    ingresses: [{
      metadata: meta("a", "site", {
        annotations: {
          [N + "configuration-snippet"]: "more_set_headers 'X: y';",
          [N + "whitelist-source-range"]: "10.0.0.0/8",
          [N + "proxy-body-size"]: "8m",
          [N + "proxy-connect-timeout"]: "3",
          [N + "limit-rps"]: "5",
          [N + "no-such-thing"]: "1",
        },
      }),
      spec: {
        ingressClassName: "scalwsd",
        tls: [{ hosts: ["www.test"], secretName: "cert" }],
        rules: [{
          host: "www.test",
          http: {
            paths: [{ path: "/", backend: { service: { name: "web", port: { number: 80 } } } }],
          },
        }],
      },
    }],
    services: [{ metadata: meta("a", "web"), spec: { ports: [{ name: "http", port: 80 }] } }],
    endpointSlices: [],
    secrets: [{
      metadata: meta("a", "cert"),
      data: { "tls.crt": btoa("C"), "tls.key": btoa("K") },
    }],
  });
  const rt = { type: "proxy", upstream: { pool: "p_a_web_80" }, connect_timeout: "3s" };
  assert.deepEqual(c.tenants[0].applications, [{
    name: "h_www-test",
    domains: ["www.test"],
    runtime: rt,
    routes: [
      {
        path: "/",
        scheme: "http",
        runtime: rt,
        policies: [{ redirect: { to: "https://$host$path$query", status: 308 } }],
      },
      { path: "/", runtime: rt, policies: [{ allow: ["10.0.0.0/8"] }], max_body: 8 * 1024 ** 2 },
    ],
    limit_req: { rate: "5r/s", burst: 25 },
  }]);
  assert.deepEqual(c.warnings, [
    `ingress a/site: annotation ${N}configuration-snippet is refused (raw nginx configuration); ` +
    "the Ingress is served without it",
    `ingress a/site: annotation ${N}no-such-thing is not supported; ignored`,
  ]);
});
