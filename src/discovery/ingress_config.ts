/**
 * Kubernetes objects -> a scalwsd configuration, for `scalwsd ingress` (pure).
 *
 * - Ingresses of class `scalwsd` (`spec.ingressClassName`, or the older
 *   `kubernetes.io/ingress.class` annotation) become one tenant per namespace (`k_<namespace>`)
 *   and one application per host (`h_<host>`), one route per path (`Prefix` and
 *   `ImplementationSpecific` match as segment prefixes, `Exact` only the path itself; a `Prefix`
 *   path `/` is the application's own runtime).
 * - Rules without a host and `spec.defaultBackend` make the catch-all application
 *   (`default_backend`, domain `DEFAULT_BACKEND_DOMAIN`, for `server.default_host`): the first
 *   Ingress (by namespace/name) with a `defaultBackend` gives its runtime, and it also answers
 *   the paths a host has no rule for. Without one, those answer 404.
 * - Each Service port a rule uses becomes a pool `p_<namespace>_<service>_<port>` with
 *   `members_from: api`; its members (ready endpoints of the Service's EndpointSlices, on the
 *   slice port whose name is the Service port's name; terminating ones left out so they drain)
 *   are returned apart, to be set with `PUT`: endpoint changes never reload.
 * - Annotations of the Ingress set the pools it uses: `scalwsd.io/load-balance`
 *   (`round_robin`, `least_conn`, `hash`: by client address), `scalwsd.io/affinity: cookie`
 *   (`hash` by cookie), `scalwsd.io/backend-protocol` (`HTTP`, `HTTPS`).
 * - An Ingress with `scalwsd.io/canary-weight: N` (0..100) adds its backend to the same host and
 *   path of the main Ingress as weighted `backends`: N to the canary, 100 - N to the main one.
 * - TLS: each `spec.tls` entry whose Secret has `tls.crt` and `tls.key` gives a certificate for
 *   its hosts (the files are written by the caller).
 */
import type { KubeObject } from "./k8s_watch.ts";
import { type KubeMember, nameOf, poolName, serviceMembers } from "./kube_pool.ts";

export { nameOf };

/** A member for `PUT`. */
export type IngressMember = KubeMember;

/** A certificate from a TLS Secret: PEM text and the hosts it serves. */
export interface IngressCertificate {
  /** `<namespace>_<secret>`. */
  readonly id: string;
  readonly cert: string;
  readonly key: string;
  readonly domains: readonly string[];
}

/** What the objects give. */
export interface IngressConfig {
  /** `upstreams` and `tenants` sections (plain data for YAML). */
  readonly upstreams: Record<string, Record<string, unknown>>;
  readonly tenants: Record<string, unknown>[];
  readonly members: ReadonlyMap<string, readonly IngressMember[]>;
  readonly certificates: readonly IngressCertificate[];
  /**
   * `DEFAULT_BACKEND_DOMAIN` when hostless rules or a `defaultBackend` made the catch-all
   * application: the caller sets `server.default_host` to it.
   */
  readonly defaultHost?: string;
  /** Problems found (a missing Service, a host claimed twice), for the log. */
  readonly warnings: readonly string[];
}

/** The objects of the watched kinds. */
export interface IngressObjects {
  readonly ingresses: Iterable<KubeObject>;
  readonly services: Iterable<KubeObject>;
  readonly endpointSlices: Iterable<KubeObject>;
  readonly secrets: Iterable<KubeObject>;
  /** Default `scalwsd`. */
  readonly ingressClass?: string;
}

// deno-lint-ignore no-explicit-any
type Any = any;

function ann(o: KubeObject, key: string): string | undefined {
  const v = (o.metadata as Any).annotations?.[key];
  return typeof v === "string" ? v : undefined;
}

function ns(o: KubeObject): string {
  return o.metadata.namespace ?? "default";
}

function normalisePath(p: unknown): string {
  if (typeof p !== "string" || !p.startsWith("/")) return "/";
  const trimmed = p.replace(/\/+$/, "");
  return trimmed === "" ? "/" : trimmed;
}

function decode(b64: unknown): string | undefined {
  if (typeof b64 !== "string") return undefined;
  try {
    return new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
  } catch {
    return undefined;
  }
}

interface Backend {
  readonly pool: string;
}

/** The domain of the catch-all application (`.invalid` never resolves: RFC 6761). */
export const DEFAULT_BACKEND_DOMAIN = "default-backend.ingress.invalid";

interface PathEntry {
  readonly path: string;
  readonly exact: boolean;
  main?: Backend;
  canary: { b: Backend; w: number }[];
}

/** Builds the configuration sections and member lists from the objects. */
export function ingressConfig(o: IngressObjects): IngressConfig {
  const cls = o.ingressClass ?? "scalwsd";
  const warnings: string[] = [];
  // Iterables may be one-shot (a Map's values): read each once.
  const slices = [...o.endpointSlices];
  const services = new Map<string, KubeObject>();
  for (const s of o.services) services.set(`${ns(s)}/${s.metadata.name}`, s);
  const ours = [...o.ingresses].filter((i) =>
    ((i as Any).spec?.ingressClassName ?? ann(i, "kubernetes.io/ingress.class")) === cls
  ).sort((a, b) => `${ns(a)}/${a.metadata.name}` < `${ns(b)}/${b.metadata.name}` ? -1 : 1);

  const upstreams: Record<string, Record<string, unknown>> = {};
  /** Pool -> namespace, service, service port object. */
  const poolTargets = new Map<string, { ns: string; svc: string; port: Any }>();

  const poolFor = (ing: KubeObject, backend: Any): Backend | undefined => {
    const svcName = backend?.service?.name;
    const want = backend?.service?.port;
    if (typeof svcName !== "string" || want === undefined) return undefined;
    const svc = services.get(`${ns(ing)}/${svcName}`);
    if (svc === undefined) {
      warnings.push(`ingress ${ns(ing)}/${ing.metadata.name}: no service "${svcName}"`);
      return undefined;
    }
    const ports: Any[] = (svc as Any).spec?.ports ?? [];
    const port = ports.find((p) =>
      (want.number !== undefined && p.port === want.number) ||
      (want.name !== undefined && p.name === want.name)
    );
    if (port === undefined) {
      warnings.push(
        `ingress ${ns(ing)}/${ing.metadata.name}: service "${svcName}" has no such port`,
      );
      return undefined;
    }
    const pool = poolName(ns(ing), svcName, port.port);
    if (upstreams[pool] === undefined) {
      const settings: Record<string, unknown> = { members_from: "api" };
      const lb = ann(ing, "scalwsd.io/load-balance");
      if (lb === "least_conn" || lb === "round_robin") settings.balance = lb;
      if (lb === "hash") Object.assign(settings, { balance: "hash", hash: { by: "client_ip" } });
      if (ann(ing, "scalwsd.io/affinity") === "cookie") {
        Object.assign(settings, { balance: "hash", hash: { by: "cookie" } });
      }
      if (ann(ing, "scalwsd.io/backend-protocol")?.toUpperCase() === "HTTPS") {
        settings.scheme = "https";
      }
      upstreams[pool] = settings;
      poolTargets.set(pool, { ns: ns(ing), svc: svcName, port });
    }
    return { pool };
  };

  // host -> path (with "=" or "^" for exact or prefix) -> main backend and canaries; host
  // owner namespace. Hostless rules go to DEFAULT_BACKEND_DOMAIN.
  const hosts = new Map<string, { ns: string; paths: Map<string, PathEntry> }>();
  let defaultBackend: { ns: string; entry: PathEntry } | undefined;
  const certificates: IngressCertificate[] = [];
  const secrets = new Map<string, KubeObject>();
  for (const s of o.secrets) secrets.set(`${ns(s)}/${s.metadata.name}`, s);
  for (const ing of ours) {
    const canaryText = ann(ing, "scalwsd.io/canary-weight");
    const canary = canaryText === undefined ? undefined : Number(canaryText);
    if (canary !== undefined && !(Number.isInteger(canary) && canary >= 0 && canary <= 100)) {
      warnings.push(
        `ingress ${ns(ing)}/${ing.metadata.name}: scalwsd.io/canary-weight must be 0..100`,
      );
      continue;
    }
    const spec = (ing as Any).spec ?? {};
    if (spec.defaultBackend !== undefined) {
      const b = poolFor(ing, spec.defaultBackend);
      if (b === undefined) {
        // poolFor said why (or the backend is a resource, which scalwsd cannot serve).
        if (spec.defaultBackend?.service === undefined) {
          warnings.push(
            `ingress ${ns(ing)}/${ing.metadata.name}: defaultBackend must be a service`,
          );
        }
      } else if (defaultBackend === undefined) {
        defaultBackend = { ns: ns(ing), entry: { path: "/", exact: false, canary: [] } };
        defaultBackend.entry.main = b;
      } else if (canary === undefined) {
        warnings.push(
          `ingress ${ns(ing)}/${ing.metadata.name}: defaultBackend ignored, ` +
            `${defaultBackend.ns}'s comes first`,
        );
      }
    }
    for (const rule of (spec.rules ?? []) as Any[]) {
      const named = typeof rule.host === "string" ? rule.host.toLowerCase() : "";
      const host = named === "" ? DEFAULT_BACKEND_DOMAIN : named;
      let h = hosts.get(host);
      if (h === undefined) hosts.set(host, h = { ns: ns(ing), paths: new Map() });
      if (h.ns !== ns(ing)) {
        warnings.push(
          `ingress ${ns(ing)}/${ing.metadata.name}: host ${host} belongs to namespace ${h.ns}`,
        );
        continue;
      }
      for (const p of (rule.http?.paths ?? []) as Any[]) {
        const b = poolFor(ing, p.backend);
        if (b === undefined) continue;
        const path = normalisePath(p.path);
        const exact = p.pathType === "Exact";
        const key = `${exact ? "=" : "^"}${path}`;
        let entry = h.paths.get(key);
        if (entry === undefined) h.paths.set(key, entry = { path, exact, canary: [] });
        if (canary !== undefined) entry.canary.push({ b, w: canary });
        else entry.main ??= b;
      }
    }
    for (const t of ((ing as Any).spec?.tls ?? []) as Any[]) {
      const secret = secrets.get(`${ns(ing)}/${t.secretName}`);
      const data = (secret as Any)?.data ?? {};
      const cert = decode(data["tls.crt"]);
      const key = decode(data["tls.key"]);
      const domains = ((t.hosts ?? []) as unknown[]).filter((x): x is string =>
        typeof x === "string"
      );
      if (cert === undefined || key === undefined || domains.length === 0) {
        warnings.push(
          `ingress ${ns(ing)}/${ing.metadata.name}: TLS secret "${t.secretName}" unusable`,
        );
        continue;
      }
      certificates.push({ id: nameOf(ns(ing), String(t.secretName)), cert, key, domains });
    }
  }

  const runtimeOf = (entry: PathEntry) => {
    if (entry.main === undefined && entry.canary.length === 0) return undefined;
    if (entry.canary.length === 0) return { type: "proxy", upstream: { pool: entry.main!.pool } };
    const share = entry.canary.reduce((n, c) => n + c.w, 0);
    const backends = entry.canary.map((c) => ({ pool: c.b.pool, weight: c.w }));
    if (entry.main !== undefined) {
      backends.unshift({ pool: entry.main.pool, weight: Math.max(0, 100 - share) });
    }
    if (!backends.some((x) => x.weight > 0)) backends[0] = { ...backends[0], weight: 1 };
    return { type: "proxy", backends };
  };

  if (defaultBackend !== undefined && !hosts.has(DEFAULT_BACKEND_DOMAIN)) {
    hosts.set(DEFAULT_BACKEND_DOMAIN, { ns: defaultBackend.ns, paths: new Map() });
  }
  const fallback = defaultBackend === undefined ? undefined : runtimeOf(defaultBackend.entry);
  const tenants = new Map<string, Record<string, unknown>[]>();
  for (const [host, h] of [...hosts].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const routes: Record<string, unknown>[] = [];
    let root: Record<string, unknown> | undefined;
    for (const [key, entry] of [...h.paths].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const rt = runtimeOf(entry);
      if (rt === undefined) continue;
      if (key === "^/") root = rt;
      else if (entry.exact) routes.push({ path: entry.path, exact: true, runtime: rt });
      else routes.push({ path: entry.path, runtime: rt });
    }
    const app: Record<string, unknown> = {
      name: host === DEFAULT_BACKEND_DOMAIN ? "default_backend" : nameOf("h", host),
      domains: [host],
      runtime: root ?? fallback ?? { type: "respond", status: 404, body: "no route\n" },
    };
    if (routes.length > 0) app.routes = routes;
    const list = tenants.get(h.ns) ?? [];
    list.push(app);
    tenants.set(h.ns, list);
  }

  const members = new Map<string, IngressMember[]>();
  for (const [pool, t] of poolTargets) {
    members.set(pool, serviceMembers(slices, t.ns, t.svc, t.port.name));
  }

  return {
    upstreams,
    tenants: [...tenants].sort(([a], [b]) => (a < b ? -1 : 1)).map(([n, applications]) => ({
      name: nameOf("k", n),
      applications,
    })),
    members,
    certificates,
    ...(hosts.has(DEFAULT_BACKEND_DOMAIN) ? { defaultHost: DEFAULT_BACKEND_DOMAIN } : {}),
    warnings,
  };
}
