/**
 * The Gateway API conformance setting, on loopback: a fake API server holding the suite's base
 * objects (namespaces `gateway-conformance-infra`, `-web-backend`, `-app-backend`; the
 * GatewayClass `scalwsd`; the Gateways `same-namespace`, `all-namespaces`,
 * `backend-namespaces`; the Services `infra-backend-v1`..`v3` and `web-backend` with their
 * EndpointSlices; TLS Secrets), echo members answering as the suite's echo server does (JSON
 * naming the backend and the request it got; `X-Echo-Set-Header: Name:Value,...` sets response
 * headers), and `scalwsd gateway` in the test process. A case applies its manifests, asserts,
 * then `reset()` removes them, so one server serves every case of a file.
 */
import assert from "node:assert/strict";
import YAML from "yaml";
import { type Gateway, startGateway } from "../../cli/gateway.ts";
import { kubeConnection } from "../../cli/kube_connection.ts";
import { fakeKubeApi, kubeconfigFor } from "./kube_api.ts";
import { request } from "./http.ts";
import { startPki, type TestPki } from "./pki.ts";
import { tempDir } from "./temp_dir.ts";
import { waitUntil } from "./wait.ts";

// deno-lint-ignore no-explicit-any
type Obj = any;

export const INFRA = "gateway-conformance-infra";
export const WEB = "gateway-conformance-web-backend";

const RESOURCES = {
  gatewayClasses: { path: "/apis/gateway.networking.k8s.io/v1/gatewayclasses", namespaced: false },
  gateways: { path: "/apis/gateway.networking.k8s.io/v1/gateways", namespaced: true },
  httpRoutes: { path: "/apis/gateway.networking.k8s.io/v1/httproutes", namespaced: true },
  referenceGrants: {
    path: "/apis/gateway.networking.k8s.io/v1/referencegrants",
    namespaced: true,
  },
  services: { path: "/api/v1/services", namespaced: true },
  endpointSlices: { path: "/apis/discovery.k8s.io/v1/endpointslices", namespaced: true },
  secrets: { path: "/api/v1/secrets", namespaced: true },
  namespaces: { path: "/api/v1/namespaces", namespaced: false },
} as const;
type Kind = keyof typeof RESOURCES;

const KINDS: Record<string, Kind> = {
  GatewayClass: "gatewayClasses",
  Gateway: "gateways",
  HTTPRoute: "httpRoutes",
  ReferenceGrant: "referenceGrants",
  Service: "services",
  EndpointSlice: "endpointSlices",
  Secret: "secrets",
  Namespace: "namespaces",
};

/** The backends of the suite: Service, namespace, loopback address of its one pod. */
const BACKENDS = [
  { name: "infra-backend-v1", ns: INFRA, ip: "127.0.0.11" },
  { name: "infra-backend-v2", ns: INFRA, ip: "127.0.0.12" },
  { name: "infra-backend-v3", ns: INFRA, ip: "127.0.0.13" },
  { name: "web-backend", ns: WEB, ip: "127.0.0.14" },
] as const;

/** What the echo member saw, as it reports it. */
export interface Echo {
  readonly backend: string;
  readonly namespace: string;
  readonly method: string;
  /** Path and query as received. */
  readonly path: string;
  readonly host: string;
  /** Lower-case names; repeated fields joined with ", ". */
  readonly headers: Record<string, string>;
}

/** One answer through scalwsd. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly echo?: Echo;
}

/** A request as the suite writes it. */
export interface Req {
  readonly host?: string;
  readonly path?: string;
  readonly method?: string;
  readonly headers?: Record<string, string>;
  /** Gateway listener port; default 80. */
  readonly port?: number;
}

const b64 = (s: string) => btoa(s);

/** Loopback addresses of the Gateway ports (the base listener is on 127.0.0.2); none for 65535. */
function addressOf(port: number): string | undefined {
  if (port === 65535) return undefined;
  if (port === 443) return "127.0.0.1:0";
  if (port === 80) return "127.0.0.3:0";
  return `127.0.0.${4 + (port % 200)}:0`;
}

/** A running conformance setting. */
export interface Conformance extends AsyncDisposable {
  readonly gateway: Gateway;
  readonly pki: TestPki;
  readonly api: ReturnType<typeof fakeKubeApi<Kind>>;
  /** A Service `namespace/name` whose one endpoint is the echo member of `backend`. */
  serviceOn(ns: string, name: string, backend: string): void;
  /** The TLS Secret data of a certificate for these names. */
  tlsSecret(ns: string, name: string, names: string[]): Promise<Obj>;
  /** Applies YAML manifests (`{GATEWAY_CLASS_NAME}` is `scalwsd`) and remembers them. */
  apply(yaml: string): void;
  /** Deletes one applied object (`Kind`, `namespace/name`). */
  remove(kind: string, key: string): void;
  /** Deletes every object applied since the start. */
  reset(): Promise<void>;
  /** One request to the Gateway port (default 80). */
  send(r: Req): Promise<Answer>;
  /** HTTPS to port 443 with SNI and Host `host`, through curl; status and echo. */
  sendTls(host: string, path: string): Promise<Answer>;
  /** Retries `check` until it holds (the configuration follows the objects shortly). */
  eventually(what: string, check: () => Promise<void> | void): Promise<void>;
  /** Waits until `r` answers from `backend` (and `more` holds), or with `status`. */
  expect(
    r: Req,
    want: { backend?: string; status?: number },
    more?: (a: Answer) => void,
  ): Promise<Answer>;
  /** The object's current state in the API server. */
  get(kind: string, key: string): Obj;
  /** A route's condition of `type` for its parent Gateway `gateway` (`namespace/name`). */
  routeCondition(route: string, gateway: string, type: string): Obj | undefined;
  /** A Gateway's listener status. */
  listener(gateway: string, name: string): Obj | undefined;
}

/** Starts the setting. */
export async function startConformance(): Promise<Conformance> {
  const dir = await tempDir("scalwsd-gateway-");
  const pki = await startPki();
  const members: Deno.HttpServer[] = [];
  let port = 0;
  for (const b of BACKENDS) {
    const server = Deno.serve({ hostname: b.ip, port, onListen() {} }, (req) => {
      const u = new URL(req.url);
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => headers[k] = v);
      const res = new Headers({ "content-type": "application/json" });
      for (const pair of (req.headers.get("x-echo-set-header") ?? "").split(",")) {
        const c = pair.indexOf(":");
        if (c > 0) res.append(pair.slice(0, c).trim(), pair.slice(c + 1).trim());
      }
      return new Response(
        JSON.stringify({
          backend: b.name,
          namespace: b.ns,
          method: req.method,
          path: u.pathname + u.search,
          host: req.headers.get("host") ?? "",
          headers,
        }),
        { headers: res },
      );
    });
    port = server.addr.port;
    members.push(server);
  }
  const api = fakeKubeApi(RESOURCES);
  const serviceOn = (ns: string, name: string, ip: string) => {
    api.put("services", {
      metadata: { name, namespace: ns },
      spec: { ports: [{ name: "first-port", port: 8080, targetPort: 3000 }] },
    });
    api.put("endpointSlices", {
      metadata: {
        name: `${name}-x1`,
        namespace: ns,
        labels: { "kubernetes.io/service-name": name },
      },
      ports: [{ name: "first-port", port }],
      endpoints: [{ addresses: [ip], conditions: { ready: true } }],
    });
  };
  for (
    const [ns, label] of [[INFRA, "infra"], [WEB, "backend"], [
      "gateway-conformance-app-backend",
      "backend",
    ]]
  ) {
    api.put("namespaces", {
      metadata: {
        name: ns,
        labels: { "gateway-conformance": label, "kubernetes.io/metadata.name": ns },
      },
    });
  }
  api.put("gatewayClasses", {
    metadata: { name: "scalwsd" },
    spec: { controllerName: "scalwsd.io/gateway-controller" },
  });
  const httpGateway = (name: string, from: Obj) => ({
    metadata: { name, namespace: INFRA },
    spec: {
      gatewayClassName: "scalwsd",
      listeners: [{
        name: "http",
        port: 80,
        protocol: "HTTP",
        allowedRoutes: { namespaces: from },
      }],
    },
  });
  api.put("gateways", httpGateway("same-namespace", { from: "Same" }));
  api.put("gateways", httpGateway("all-namespaces", { from: "All" }));
  api.put(
    "gateways",
    httpGateway("backend-namespaces", {
      from: "Selector",
      selector: { matchLabels: { "gateway-conformance": "backend" } },
    }),
  );
  for (const b of BACKENDS) serviceOn(b.ns, b.name, b.ip);
  await Deno.writeTextFile(`${dir.path}/kubeconfig`, kubeconfigFor(api.url));
  await Deno.writeTextFile(
    `${dir.path}/base.yaml`,
    `server:
  listeners: [{name: base, address: "127.0.0.2:0"}]
  admin: {socket: "${dir.path}/admin.sock"}
  access_log: "off"
`,
  );
  const gateway = await startGateway({
    baseConfig: `${dir.path}/base.yaml`,
    configOut: `${dir.path}/out/scalws.yaml`,
    kube: await kubeConnection(`${dir.path}/kubeconfig`),
    addressOf,
    initialSyncMs: 10_000,
    publishStatusAddresses: ["203.0.113.9"],
  });
  const applied: [Kind, string][] = [];
  let issued = 0;
  const self: Conformance = {
    gateway,
    pki,
    api,
    serviceOn(ns, name, backend) {
      serviceOn(ns, name, BACKENDS.find((b) => b.name === backend)!.ip);
    },
    async tlsSecret(ns, name, names) {
      const c = await pki.issue(`s${issued++}`, names);
      return {
        apiVersion: "v1",
        kind: "Secret",
        type: "kubernetes.io/tls",
        metadata: { name, namespace: ns },
        data: {
          "tls.crt": b64(await Deno.readTextFile(c.cert)),
          "tls.key": b64(await Deno.readTextFile(c.key)),
        },
      };
    },
    apply(yaml) {
      for (
        const doc of YAML.parseAllDocuments(yaml.replaceAll("{GATEWAY_CLASS_NAME}", "scalwsd"))
      ) {
        const o = doc.toJS();
        if (o === null || o === undefined) continue;
        const kind = KINDS[o.kind];
        if (kind === undefined) throw new Error(`no kind ${o.kind}`);
        api.put(kind, o);
        const key = o.metadata.namespace
          ? `${o.metadata.namespace}/${o.metadata.name}`
          : o.metadata.name;
        if (!applied.some(([k, x]) => k === kind && x === key)) applied.push([kind, key]);
      }
    },
    remove(kind, key) {
      api.delete(KINDS[kind], key);
    },
    async reset() {
      for (const [k, key] of applied.splice(0)) api.delete(k, key);
      await gateway.settled();
    },
    async send(r) {
      const bound = gateway.server.bound.get(`gw-${r.port ?? 80}`);
      if (bound === undefined) throw new Error(`no listener for port ${r.port ?? 80} yet`);
      const res = await request(`http://${bound.hostname}:${bound.port}${r.path ?? "/"}`, {
        method: r.method ?? "GET",
        headers: { host: r.host ?? "example.test", ...(r.headers ?? {}) },
      });
      let echo: Echo | undefined;
      if (res.headers.get("content-type") === "application/json") {
        try {
          echo = JSON.parse(res.text);
        } catch { /* not an echo */ }
      }
      return { status: res.status, headers: res.headers, ...(echo ? { echo } : {}) };
    },
    async sendTls(host, path) {
      const bound = gateway.server.bound.get("gw-443");
      if (bound === undefined) throw new Error("no listener for port 443 yet");
      const out = await new Deno.Command("curl", {
        args: [
          "-s",
          "--max-time",
          "5",
          "--cacert",
          pki.caFile,
          "--resolve",
          `${host}:${bound.port}:${bound.hostname}`,
          "-w",
          "\n%{http_code}",
          `https://${host}:${bound.port}${path}`,
        ],
        stdout: "piped",
        stderr: "null",
      }).output();
      const text = new TextDecoder().decode(out.stdout);
      const nl = text.lastIndexOf("\n");
      let echo: Echo | undefined;
      try {
        echo = JSON.parse(text.slice(0, nl));
      } catch { /* not an echo */ }
      return {
        status: Number(text.slice(nl + 1)),
        headers: new Headers(),
        ...(echo ? { echo } : {}),
      };
    },
    async eventually(what, check) {
      await waitUntil(async () => {
        await check();
        return true;
      }, { what, timeoutMs: 5000, intervalMs: 20 });
    },
    async expect(r, want, more) {
      let last: Answer | undefined;
      await self.eventually(
        `${r.method ?? "GET"} ${r.host ?? ""}${r.path ?? "/"} -> ${want.backend ?? want.status}`,
        async () => {
          const a = last = await self.send(r);
          if (want.backend !== undefined) {
            if (a.status !== 200 || a.echo?.backend !== want.backend) {
              throw new Error(`got ${a.status} from ${a.echo?.backend ?? "scalwsd"}`);
            }
          }
          if (want.status !== undefined && a.status !== want.status) {
            throw new Error(`got ${a.status} from ${a.echo?.backend ?? "scalwsd"}`);
          }
          more?.(a);
        },
      );
      return last!;
    },
    get(kind, key) {
      return api.get(KINDS[kind], key);
    },
    routeCondition(route, gateway, type) {
      const [gns, gname] = gateway.split("/");
      const parent = (api.get("httpRoutes", route)?.status?.parents ?? []).find((p: Obj) =>
        p.parentRef.name === gname && p.parentRef.namespace === gns
      );
      return parent?.conditions?.find((c: Obj) => c.type === type);
    },
    listener(gateway, name) {
      return (api.get("gateways", gateway)?.status?.listeners ?? []).find((l: Obj) =>
        l.name === name
      );
    },
    async [Symbol.asyncDispose]() {
      await gateway.stop();
      await api.close();
      for (const m of members) await m.shutdown();
      await pki.close();
      await dir[Symbol.asyncDispose]();
    },
  };
  return self;
}

/** The suite's `GatewayAndHTTPRoutesMustBeAccepted` and `...ResolvedRefsConditionsTrue`. */
export async function accepted(
  c: Conformance,
  gateway: string,
  ...routes: string[]
): Promise<void> {
  for (const r of routes) {
    await c.eventually(`${r} accepted by ${gateway}`, () => {
      assert.equal(c.routeCondition(r, gateway, "Accepted")?.status, "True");
      assert.equal(c.routeCondition(r, gateway, "ResolvedRefs")?.status, "True");
    });
  }
  await c.eventually(`${gateway} programmed`, () => {
    const g = c.get("Gateway", gateway);
    assert.equal(
      g.status.conditions.find((x: { type: string }) => x.type === "Programmed")?.status,
      "True",
    );
    assert.deepEqual(g.status.addresses, [{ type: "IPAddress", value: "203.0.113.9" }]);
  });
}

/** A step that removes its objects however it ends, so the next case starts clean. */
export function stepper(t: Deno.TestContext, c: Conformance) {
  return (name: string, fn: () => Promise<void>) =>
    t.step(name, async () => {
      try {
        await fn();
      } finally {
        await c.reset();
      }
    });
}
