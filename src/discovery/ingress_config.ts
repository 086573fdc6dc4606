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
import { checkPattern } from "../config/mod.ts";
import { type IngressAnnotations, readAnnotations, regexPrefix } from "./nginx_annotations.ts";
import { secretText } from "./kube_secret.ts";

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
  /** Files the configuration names (htpasswd files), relative to it; the caller writes them. */
  readonly files: readonly { readonly name: string; readonly text: string }[];
}

/** The objects of the watched kinds. */
export interface IngressObjects {
  readonly ingresses: Iterable<KubeObject>;
  readonly services: Iterable<KubeObject>;
  readonly endpointSlices: Iterable<KubeObject>;
  readonly secrets: Iterable<KubeObject>;
  /** Default `scalwsd`. */
  readonly ingressClass?: string;
  /**
   * TLS is served (`--https-address`): plain requests to a host of an Ingress's `spec.tls` are
   * redirected to `https://` unless `nginx.ingress.kubernetes.io/ssl-redirect: "false"`.
   */
  readonly tlsServed?: boolean;
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

interface Backend {
  readonly pool: string;
}

/** The domain of the catch-all application (`.invalid` never resolves: RFC 6761). */
export const DEFAULT_BACKEND_DOMAIN = "default-backend.ingress.invalid";

interface PathEntry {
  readonly path: string;
  readonly exact: boolean;
  main?: Backend;
  /** The annotations of the Ingress that gave `main`. */
  ann?: IngressAnnotations;
  /** Plain requests are redirected to `https://`. */
  ssl?: boolean;
  /** `rewrite-target`: a regex rewrite. */
  rewrite?: { match: string; to: string };
  canary: { b: Backend; w: number; total: number; header?: string; headerValue?: string }[];
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

  const poolFor = (
    ing: KubeObject,
    backend: Any,
    poolSettings: Record<string, unknown>,
  ): Backend | undefined => {
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
      upstreams[pool] = { members_from: "api", ...poolSettings };
      poolTargets.set(pool, { ns: ns(ing), svc: svcName, port });
    }
    return { pool };
  };

  // host -> path (with "=" or "^" for exact or prefix) -> main backend and canaries; host
  // owner namespace. Hostless rules go to DEFAULT_BACKEND_DOMAIN.
  const hosts = new Map<
    string,
    { ns: string; paths: Map<string, PathEntry>; limitReq?: IngressAnnotations["limitReq"] }
  >();
  const files: { name: string; text: string }[] = [];
  let defaultBackend: { ns: string; entry: PathEntry } | undefined;
  const certificates: IngressCertificate[] = [];
  const secrets = new Map<string, KubeObject>();
  for (const s of o.secrets) secrets.set(`${ns(s)}/${s.metadata.name}`, s);
  for (const ing of ours) {
    const spec = (ing as Any).spec ?? {};
    const tlsHosts = new Set<string>();
    for (const t of (spec.tls ?? []) as Any[]) {
      for (const h of (t.hosts ?? []) as unknown[]) {
        if (typeof h === "string") tlsHosts.add(h.toLowerCase());
      }
    }
    const a = readAnnotations(ing, { hasTls: tlsHosts.size > 0, secrets, warnings });
    const c = a.canary;
    if (
      c?.weight !== undefined &&
      !(Number.isInteger(c.weight) && c.weight >= 0 && c.weight <= c.total)
    ) {
      warnings.push(
        `ingress ${ns(ing)}/${ing.metadata.name}: ${
          ann(ing, "scalwsd.io/canary-weight") !== undefined
            ? "scalwsd.io/canary-weight must be 0..100"
            : `canary-weight must be 0..${c.total}`
        }`,
      );
      continue;
    }
    const canary = c === undefined
      ? undefined
      : { w: c.weight ?? 0, total: c.total, header: c.header, headerValue: c.headerValue };
    if (a.authFile !== undefined) files.push(a.authFile);
    if (spec.defaultBackend !== undefined) {
      const b = poolFor(ing, spec.defaultBackend, a.pool);
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
        defaultBackend.entry.ann = a;
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
      if (canary === undefined && a.limitReq !== undefined) h.limitReq ??= a.limitReq;
      const ssl = a.sslRedirect === "force" ||
        (a.sslRedirect === "tls" && o.tlsServed === true && tlsHosts.has(host));
      for (const p of (rule.http?.paths ?? []) as Any[]) {
        const b = poolFor(ing, p.backend, a.pool);
        if (b === undefined) continue;
        let path = normalisePath(p.path);
        let exact = p.pathType === "Exact";
        let rewrite: PathEntry["rewrite"];
        if (a.regex && typeof p.path === "string") {
          const r = regexPrefix(p.path);
          if (r.partial) {
            warnings.push(
              `ingress ${ns(ing)}/${ing.metadata.name}: path "${p.path}" is routed as the prefix ` +
                `${r.prefix}`,
            );
          }
          path = r.prefix;
          exact = false;
          if (a.rewriteTarget !== undefined) {
            const match = `^${p.path}`;
            const problem = checkPattern(match);
            if (typeof problem === "string") {
              warnings.push(
                `ingress ${ns(ing)}/${ing.metadata.name}: path "${p.path}": ${problem}; skipped`,
              );
              continue;
            }
            rewrite = { match, to: a.rewriteTarget };
          }
        }
        const key = `${exact ? "=" : "^"}${path}`;
        let entry = h.paths.get(key);
        if (entry === undefined) h.paths.set(key, entry = { path, exact, canary: [] });
        if (canary !== undefined) entry.canary.push({ b, ...canary });
        else if (entry.main === undefined) {
          entry.main = b;
          entry.ann = a;
          entry.ssl = ssl;
          if (rewrite !== undefined) entry.rewrite = rewrite;
        } else if (entry.main.pool !== b.pool) {
          warnings.push(
            `ingress ${ns(ing)}/${ing.metadata.name}: path ${path} of ${host} is served already`,
          );
        }
      }
    }
    for (const t of ((ing as Any).spec?.tls ?? []) as Any[]) {
      const secret = secrets.get(`${ns(ing)}/${t.secretName}`);
      const cert = secretText(secret, "tls.crt");
      const key = secretText(secret, "tls.key");
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

  const runtimeOf = (entry: PathEntry): Record<string, unknown> | undefined => {
    if (entry.main === undefined && entry.canary.length === 0) return undefined;
    if (entry.ann?.authBroken) return { type: "respond", status: 503, body: "unavailable\n" };
    const proxy = entry.ann?.proxy ?? {};
    const weighted = entry.canary.filter((c) => c.w > 0 || c.header === undefined);
    if (weighted.length === 0) {
      return entry.main === undefined
        ? { type: "proxy", upstream: { pool: entry.canary[0].b.pool }, ...proxy }
        : { type: "proxy", upstream: { pool: entry.main.pool }, ...proxy };
    }
    // Canary weights are out of their total (100 by default); the main backend has the rest.
    const total = weighted[0].total;
    const share = weighted.reduce((n, c) => n + c.w, 0);
    const backends = weighted.map((c) => ({ pool: c.b.pool, weight: c.w }));
    if (entry.main !== undefined) {
      backends.unshift({ pool: entry.main.pool, weight: Math.max(0, total - share) });
    }
    if (!backends.some((x) => x.weight > 0)) backends[0] = { ...backends[0], weight: 1 };
    const scale = Math.max(...backends.map((b) => b.weight)) > 1000
      ? 1000 / Math.max(...backends.map((b) => b.weight))
      : 1;
    return {
      type: "proxy",
      backends: scale === 1
        ? backends
        : backends.map((b) => ({ ...b, weight: Math.round(b.weight * scale) })),
      ...proxy,
    };
  };

  /** The routes of one path: https redirect, header canaries, then the path itself. */
  const routesOf = (entry: PathEntry, rt: Record<string, unknown>): Record<string, unknown>[] => {
    const at = entry.exact ? { path: entry.path, exact: true } : { path: entry.path };
    const policies = [
      ...(entry.ann?.policies ?? []),
      ...(entry.rewrite ? [{ rewrite: { regex: entry.rewrite } }] : []),
    ];
    const extras = {
      ...(policies.length > 0 ? { policies } : {}),
      ...(entry.ann?.maxBody !== undefined ? { max_body: entry.ann.maxBody } : {}),
    };
    const out: Record<string, unknown>[] = [];
    if (entry.ssl) {
      out.push({
        ...at,
        scheme: "http",
        runtime: rt,
        policies: [{ redirect: { to: "https://$host$path$query", status: 308 } }],
      });
    }
    const proxy = entry.ann?.proxy ?? {};
    for (const c of entry.canary) {
      if (c.header === undefined) continue;
      out.push({
        ...at,
        headers: { [c.header]: c.headerValue ?? "always" },
        runtime: { type: "proxy", upstream: { pool: c.b.pool }, ...proxy },
        ...extras,
      });
      if (c.headerValue === undefined && entry.main !== undefined) {
        out.push({
          ...at,
          headers: { [c.header]: "never" },
          runtime: { type: "proxy", upstream: { pool: entry.main.pool }, ...proxy },
          ...extras,
        });
      }
    }
    if (out.length > 0 || Object.keys(extras).length > 0) {
      out.push({ ...at, runtime: rt, ...extras });
    }
    return out;
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
      const more = routesOf(entry, rt);
      if (key === "^/") root = rt;
      if (more.length > 0) routes.push(...more);
      else if (key === "^/") continue;
      else if (entry.exact) routes.push({ path: entry.path, exact: true, runtime: rt });
      else routes.push({ path: entry.path, runtime: rt });
    }
    const app: Record<string, unknown> = {
      name: host === DEFAULT_BACKEND_DOMAIN ? "default_backend" : nameOf("h", host),
      domains: [host],
      runtime: root ?? fallback ?? { type: "respond", status: 404, body: "no route\n" },
    };
    if (routes.length > 0) app.routes = routes;
    if (h.limitReq !== undefined) app.limit_req = h.limitReq;
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
    files,
  };
}
