/**
 * `scalwsd ingress` against a fake Kubernetes API server in the test (real HTTP, chunked watch
 * streams): Ingress, Service and EndpointSlice objects become routes and
 * `p_<namespace>_<service>_<port>` pools; endpoint changes go through PUT (no reload), routing
 * changes reload; annotations set the pool; a canary Ingress becomes weighted backends; a 410
 * in the middle of a watch makes it list again.
 */
import assert from "node:assert/strict";
import { startIngress } from "../cli/ingress.ts";
import { adminFetch, get, tempDir, waitUntil } from "./_support/mod.ts";
import { fakeKubeApi, kubeconfigFor } from "./_support/kube_api.ts";

const fakeApi = () =>
  fakeKubeApi({
    ingresses: { path: "/apis/networking.k8s.io/v1/ingresses", namespaced: true },
    services: { path: "/api/v1/services", namespaced: true },
    endpointSlices: { path: "/apis/discovery.k8s.io/v1/endpointslices", namespaced: true },
    secrets: { path: "/api/v1/secrets", namespaced: true },
  });

const service = (name: string, port: number) => ({
  metadata: { name, namespace: "shop" },
  spec: { ports: [{ name: "http", port, targetPort: "http" }] },
});
const slice = (
  svc: string,
  port: number,
  endpoints: { ip: string; ready?: boolean; terminating?: boolean }[],
) => ({
  metadata: {
    name: `${svc}-abc`,
    namespace: "shop",
    labels: { "kubernetes.io/service-name": svc },
  },
  ports: [{ name: "http", port }],
  endpoints: endpoints.map((e) => ({
    addresses: [e.ip],
    conditions: { ready: e.ready ?? true, terminating: e.terminating ?? false },
  })),
});
const ingress = (
  name: string,
  paths: [string, string][],
  annotations: Record<string, string> = {},
) => ({
  metadata: { name, namespace: "shop", annotations },
  spec: {
    ingressClassName: "scalwsd",
    rules: [{
      host: "shop.test",
      http: {
        paths: paths.map(([path, svc]) => ({
          path,
          pathType: "Prefix",
          backend: { service: { name: svc, port: { number: 80 } } },
        })),
      },
    }],
  },
});

/** A member answering its name on `hostname:port`. */
function serveOn(hostname: string, port: number, name: string) {
  const server = Deno.serve({ hostname, port, onListen() {} }, () => new Response(name));
  return { port: server.addr.port, [Symbol.asyncDispose]: () => server.shutdown() };
}

Deno.test({
  name: "scalwsd ingress follows Ingresses, Services and EndpointSlices from a watching API server",
  sanitizeResources: false,
  async fn() {
    await using web1 = serveOn("127.0.0.2", 0, "web-1");
    await using _web2 = serveOn("127.0.0.3", web1.port, "web-2");
    await using _api1 = serveOn("127.0.0.4", web1.port, "api-1");
    await using _canary = serveOn("127.0.0.5", web1.port, "canary");
    await using _other = serveOn("127.0.0.6", web1.port, "other");
    const P = web1.port;
    const api = fakeApi();
    await using dir = await tempDir("scalwsd-ingress-");
    await Deno.writeTextFile(`${dir.path}/kubeconfig`, kubeconfigFor(api.url));
    await Deno.writeTextFile(
      `${dir.path}/base.yaml`,
      `server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
  admin: {socket: "${dir.path}/admin.sock"}
  access_log: "off"
`,
    );
    api.put("services", service("web", 80));
    api.put("services", service("other", 80));
    api.put(
      "endpointSlices",
      slice("web", P, [{ ip: "127.0.0.2" }, { ip: "127.0.0.9", ready: false }]),
    );
    api.put(
      "ingresses",
      ingress("shop", [["/", "web"]], { "scalwsd.io/load-balance": "least_conn" }),
    );
    // Another class: ignored.
    api.put("ingresses", {
      ...ingress("theirs", [["/", "other"]]),
      spec: { ...ingress("x", []).spec, ingressClassName: "nginx" },
    });

    const { kubeConnection } = await import("../cli/kube_connection.ts");
    const running = await startIngress({
      baseConfig: `${dir.path}/base.yaml`,
      configOut: `${dir.path}/out/scalws.yaml`,
      kube: await kubeConnection(`${dir.path}/kubeconfig`),
      initialSyncMs: 10_000,
      publishStatusAddresses: ["203.0.113.7", "lb.shop.test"],
    });
    try {
      const url = `http://127.0.0.1:${[...running.server.bound.values()][0].port}`;
      const hit = async (path = "/") => (await get(url + path, { host: "shop.test" })).text;
      const pool = async (name: string) =>
        await (await adminFetch(`${dir.path}/admin.sock`, `/v1/upstreams/${name}`)).json();
      assert.equal(await hit(), "web-1");
      let p = await pool("p_shop_web_80");
      assert.deepEqual(p.members.map((m: { address: string }) => m.address), [`127.0.0.2:${P}`]);
      assert.equal(p.source, "kubernetes");
      assert.equal(p.members_from, "api");
      assert.equal(p.balance, "least_conn");
      const gen = running.server.generation.id;
      const text = await Deno.readTextFile(`${dir.path}/out/scalws.yaml`);
      assert.match(text, /p_shop_web_80:/);
      // status.loadBalancer: written once for the Ingress of class scalwsd, not for the other.
      assert.deepEqual(api.get("ingresses", "shop/shop").status, {
        loadBalancer: { ingress: [{ ip: "203.0.113.7" }, { hostname: "lb.shop.test" }] },
      });
      assert.equal(api.get("ingresses", "shop/theirs").status, undefined);
      assert.doesNotMatch(text, /p_shop_other_80/);

      // Endpoints: a new ready pod, the first one terminating. PUT only: no reload.
      await waitUntil(() => api.watching("endpointSlices"), {
        what: "the slice watch",
        timeoutMs: 10_000,
      });
      api.put(
        "endpointSlices",
        slice("web", P, [{ ip: "127.0.0.2", terminating: true, ready: false }, {
          ip: "127.0.0.3",
        }]),
      );
      await waitUntil(async () => (await hit()) === "web-2", {
        what: "web-2 serving",
        timeoutMs: 10_000,
      });
      p = await pool("p_shop_web_80");
      assert.deepEqual(p.members.map((m: { address: string }) => m.address), [`127.0.0.3:${P}`]);
      assert.equal(running.server.generation.id, gen, "an endpoint change must not reload");

      // Routing: a new path to a new Service reloads; a bookmark changes nothing.
      api.put("services", service("api", 80));
      api.put("endpointSlices", slice("api", P, [{ ip: "127.0.0.4" }]));
      api.bookmark("ingresses");
      api.put("ingresses", ingress("shop", [["/", "web"], ["/api", "api"]]));
      await waitUntil(async () => (await hit("/api/x")) === "api-1", {
        what: "the /api route",
        timeoutMs: 10_000,
      });
      assert.ok(running.server.generation.id > gen);

      // A canary Ingress with weight 50 becomes weighted backends on the same host and path.
      api.put("services", service("canary", 80));
      api.put("endpointSlices", slice("canary", P, [{ ip: "127.0.0.5" }]));
      api.put(
        "ingresses",
        ingress("shop-canary", [["/", "canary"]], { "scalwsd.io/canary-weight": "50" }),
      );
      await waitUntil(async () => (await hit()) === "canary", {
        what: "canary answers",
        timeoutMs: 10_000,
      });
      const seen = new Map<string, number>();
      for (let i = 0; i < 8; i++) {
        const t = await hit();
        seen.set(t, (seen.get(t) ?? 0) + 1);
      }
      assert.deepEqual(Object.fromEntries(seen), { "web-2": 4, canary: 4 });
      const out = await Deno.readTextFile(`${dir.path}/out/scalws.yaml`);
      assert.match(
        out,
        /backends:\n\s+- pool: p_shop_web_80\n\s+weight: 50\n\s+- pool: p_shop_canary_80\n\s+weight: 50/,
      );

      // 410 Gone in the middle of the ingress watch: it lists again and keeps following.
      const before = api.lists("ingresses");
      api.gone("ingresses");
      await waitUntil(() => api.lists("ingresses") > before && api.watching("ingresses"), {
        what: "a relist after 410",
        timeoutMs: 10_000,
      });
      api.put(
        "ingresses",
        ingress("shop-canary", [["/", "canary"]], { "scalwsd.io/canary-weight": "0" }),
      );
      await waitUntil(async () => {
        const r = new Set<string>();
        for (let i = 0; i < 4; i++) r.add(await hit());
        return r.size === 1 && r.has("web-2");
      }, { what: "canary weight 0", timeoutMs: 10_000 });

      // A defaultBackend answers the hosts no rule names (server.default_host), and an Exact
      // path only the path itself.
      api.put("endpointSlices", slice("other", P, [{ ip: "127.0.0.6" }]));
      const exact = ingress("shop-exact", [["/exact", "api"]]);
      exact.spec.rules[0].http.paths[0].pathType = "Exact";
      api.put("ingresses", exact);
      api.put("ingresses", {
        metadata: { name: "fallback", namespace: "shop", annotations: {} },
        spec: {
          ingressClassName: "scalwsd",
          defaultBackend: { service: { name: "other", port: { number: 80 } } },
        },
      });
      const unknown = async () => (await get(url + "/", { host: "unknown.test" })).text;
      await waitUntil(async () => (await unknown()) === "other", {
        what: "the default backend",
        timeoutMs: 10_000,
      });
      assert.equal(await hit("/exact"), "api-1");
      assert.equal(await hit("/exact/more"), "web-2");
      assert.match(
        await Deno.readTextFile(`${dir.path}/out/scalws.yaml`),
        /default_host: default-backend\.ingress\.invalid/,
      );
      await running.settled();
      // Each Ingress patched once per change of its spec, never again for the event its own
      // patch caused.
      assert.deepEqual(api.statusPatches.filter((k) => k === "ingresses/shop/fallback"), [
        "ingresses/shop/fallback",
      ]);
      assert.equal(api.get("ingresses", "shop/fallback").status.loadBalancer.ingress.length, 2);
    } finally {
      await running.stop();
      await api.close();
    }
  },
});
