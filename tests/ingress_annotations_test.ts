/**
 * `scalwsd ingress` with ingress-nginx's `nginx.ingress.kubernetes.io/*` annotations, against a
 * fake API server and real members: each Ingress below carries one annotation (or a family),
 * and a real request through scalwsd shows it took effect.
 */
import assert from "node:assert/strict";
import bcrypt from "bcryptjs";
import { startIngress } from "../cli/ingress.ts";
import { kubeConnection } from "../cli/kube_connection.ts";
import { fakeKubeApi, kubeconfigFor } from "./_support/kube_api.ts";
import { adminFetch, request, tempDir, waitUntil } from "./_support/mod.ts";

const N = "nginx.ingress.kubernetes.io/";
const RESOURCES = {
  ingresses: { path: "/apis/networking.k8s.io/v1/ingresses", namespaced: true },
  services: { path: "/api/v1/services", namespaced: true },
  endpointSlices: { path: "/apis/discovery.k8s.io/v1/endpointslices", namespaced: true },
  secrets: { path: "/api/v1/secrets", namespaced: true },
} as const;

// deno-lint-ignore no-explicit-any
type Obj = any;

Deno.test({
  name: "scalwsd ingress follows ingress-nginx annotations",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    // Members: "main" and "canary" echo the path they got; "slow" answers after 1.5 s.
    const echo = (name: string, hostname: string, port = 0) =>
      Deno.serve({ hostname, port, onListen() {} }, async (req) => {
        const u = new URL(req.url);
        if (name === "slow") await new Promise((r) => setTimeout(r, 1500));
        return Response.json({ name, path: u.pathname + u.search });
      });
    const main = echo("main", "127.0.0.21");
    const P = main.addr.port;
    const canary = echo("canary", "127.0.0.22", P);
    const slow = echo("slow", "127.0.0.23", P);
    await using dir = await tempDir("scalwsd-annotations-");
    const api = fakeKubeApi(RESOURCES);
    const svc = (name: string, ip: string) => {
      api.put("services", {
        metadata: { name, namespace: "shop" },
        spec: { ports: [{ name: "http", port: 80 }] },
      });
      api.put("endpointSlices", {
        metadata: {
          name: `${name}-1`,
          namespace: "shop",
          labels: { "kubernetes.io/service-name": name },
        },
        ports: [{ name: "http", port: P }],
        endpoints: [{ addresses: [ip], conditions: { ready: true } }],
      });
    };
    svc("main", "127.0.0.21");
    svc("canary", "127.0.0.22");
    svc("slow", "127.0.0.23");
    const ing = (
      name: string,
      annotations: Record<string, string>,
      paths: [string, string?, string?][] = [["/"]],
    ) =>
      api.put("ingresses", {
        metadata: {
          name,
          namespace: "shop",
          annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [N + k, v])),
        },
        spec: {
          ingressClassName: "scalwsd",
          rules: [{
            host: `${name}.test`,
            http: {
              paths: paths.map(([path, type, service]) => ({
                path,
                pathType: type ?? "Prefix",
                backend: { service: { name: service ?? "main", port: { number: 80 } } },
              })),
            },
          }],
        },
      });
    ing("rewrite", { "rewrite-target": "/$2", "use-regex": "true" }, [[
      "/something(/|$)(.*)",
      "ImplementationSpecific",
    ]]);
    ing("permanent", { "permanent-redirect": "https://example.org/moved" });
    ing("force", { "force-ssl-redirect": "true" });
    ing("affinity", {
      affinity: "cookie",
      "session-cookie-name": "route",
      "load-balance": "ewma",
      "backend-protocol": "HTTP",
    });
    ing("body", { "proxy-body-size": "1k" });
    ing("timeout", { "proxy-read-timeout": "1", "proxy-connect-timeout": "2" }, [[
      "/",
      "Prefix",
      "slow",
    ]]);
    ing("allow", { "whitelist-source-range": "10.0.0.0/8, 192.0.2.0/24" });
    ing("auth", { "auth-type": "basic", "auth-secret": "htpasswd", "auth-realm": "Shop" });
    api.put("secrets", {
      metadata: { name: "htpasswd", namespace: "shop" },
      data: {
        auth: btoa(
          `alice:${bcrypt.hashSync("wonder", 4)}\nbob:$apr1$abc$0123456789012345678901\n`,
        ),
      },
    });
    ing("cors", {
      "enable-cors": "true",
      "cors-allow-origin": "https://app.test",
      "cors-allow-methods": "GET, PUT",
      "cors-max-age": "600",
    });
    ing("canary", {});
    api.put("ingresses", {
      ...api.get("ingresses", "shop/canary"),
      metadata: {
        name: "canary-b",
        namespace: "shop",
        annotations: {
          [N + "canary"]: "true",
          [N + "canary-weight"]: "0",
          [N + "canary-by-header"]: "X-Canary",
        },
      },
      spec: {
        ingressClassName: "scalwsd",
        rules: [{
          host: "canary.test",
          http: {
            paths: [{
              path: "/",
              pathType: "Prefix",
              backend: { service: { name: "canary", port: { number: 80 } } },
            }],
          },
        }],
      },
    });
    ing("limit", { "limit-rps": "1", "limit-burst-multiplier": "1" });
    ing("snippet", { "configuration-snippet": "more_set_headers 'X: y';" });

    await Deno.writeTextFile(`${dir.path}/kubeconfig`, kubeconfigFor(api.url));
    await Deno.writeTextFile(
      `${dir.path}/base.yaml`,
      `server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
  admin: {socket: "${dir.path}/admin.sock"}
  access_log: "off"
`,
    );
    const running = await startIngress({
      baseConfig: `${dir.path}/base.yaml`,
      configOut: `${dir.path}/out/scalws.yaml`,
      kube: await kubeConnection(`${dir.path}/kubeconfig`),
      initialSyncMs: 10_000,
    });
    try {
      const url = `http://127.0.0.1:${[...running.server.bound.values()][0].port}`;
      const send = (
        host: string,
        path = "/",
        init: { method?: string; headers?: Record<string, string>; body?: string } = {},
      ) => request(url + path, { ...init, headers: { host, ...(init.headers ?? {}) } });
      const json = (r: { text: string }): Obj => JSON.parse(r.text);
      await waitUntil(async () => (await send("permanent.test")).status === 301, {
        what: "the annotated Ingresses served",
        timeoutMs: 10_000,
      });

      await t.step("rewrite-target with use-regex and capture groups", async () => {
        assert.equal(json(await send("rewrite.test", "/something/new?q=1")).path, "/new?q=1");
        assert.equal(json(await send("rewrite.test", "/something")).path, "/");
      });
      await t.step("permanent-redirect", async () => {
        const r = await send("permanent.test", "/x");
        assert.equal(r.status, 301);
        assert.equal(r.headers.get("location"), "https://example.org/moved");
      });
      await t.step("force-ssl-redirect", async () => {
        const r = await send("force.test", "/a?b=1");
        assert.equal(r.status, 308);
        assert.equal(r.headers.get("location"), "https://force.test/a?b=1");
      });
      await t.step(
        "affinity cookie, session-cookie-name, load-balance, backend-protocol",
        async () => {
          const p =
            await (await adminFetch(`${dir.path}/admin.sock`, "/v1/upstreams/p_shop_main_80"))
              .json();
          assert.equal(p.balance, "hash");
          assert.deepEqual(p.hash, { by: "cookie", name: "route", cookie_max_age: 0 });
          assert.equal(json(await send("affinity.test")).name, "main");
        },
      );
      await t.step("proxy-body-size", async () => {
        assert.equal(
          (await send("body.test", "/", { method: "POST", body: "x".repeat(1024) })).status,
          200,
        );
        assert.equal(
          (await send("body.test", "/", { method: "POST", body: "x".repeat(1025) })).status,
          413,
        );
      });
      await t.step("proxy-read-timeout", async () => {
        assert.equal((await send("timeout.test")).status, 504);
      });
      await t.step("whitelist-source-range", async () => {
        assert.equal((await send("allow.test")).status, 403);
      });
      await t.step("auth-type basic with auth-secret (bcrypt users only)", async () => {
        const no = await send("auth.test");
        assert.equal(no.status, 401);
        assert.equal(no.headers.get("www-authenticate"), 'Basic realm="Shop"');
        const yes = await send("auth.test", "/", {
          headers: { authorization: `Basic ${btoa("alice:wonder")}` },
        });
        assert.equal(yes.status, 200);
      });
      await t.step("enable-cors and cors-allow-*", async () => {
        const r = await send("cors.test", "/", {
          method: "OPTIONS",
          headers: { origin: "https://app.test", "access-control-request-method": "PUT" },
        });
        assert.equal(r.status, 204);
        assert.equal(r.headers.get("access-control-allow-origin"), "https://app.test");
        assert.equal(r.headers.get("access-control-max-age"), "600");
        const other = await send("cors.test", "/", { headers: { origin: "https://evil.test" } });
        assert.equal(other.headers.get("access-control-allow-origin"), null);
      });
      await t.step("canary with canary-by-header", async () => {
        assert.equal(json(await send("canary.test")).name, "main");
        assert.equal(
          json(await send("canary.test", "/", { headers: { "X-Canary": "always" } })).name,
          "canary",
        );
        assert.equal(
          json(await send("canary.test", "/", { headers: { "X-Canary": "never" } })).name,
          "main",
        );
      });
      await t.step("limit-rps", async () => {
        const statuses = [];
        for (let i = 0; i < 4; i++) statuses.push((await send("limit.test")).status);
        assert.equal(statuses[0], 200);
        assert.ok(statuses.includes(429), `${statuses}`);
      });
      await t.step("configuration-snippet is refused, the Ingress is served", async () => {
        assert.equal(json(await send("snippet.test")).name, "main");
      });
    } finally {
      await running.stop();
      await api.close();
      for (const s of [main, canary, slow]) await s.shutdown();
    }
  },
});
