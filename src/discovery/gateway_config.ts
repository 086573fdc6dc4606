/**
 * Gateway API objects -> a scalwsd configuration, for `scalwsd gateway` (pure).
 *
 * - Every port of a usable listener becomes a scalwsd listener `gw-<port>` (the caller says on
 *   which address); HTTPS ports carry the certificates of their listeners.
 * - Every hostname a listener or an attached route gives (exact, `*.suffix` as the any-label
 *   wildcard `**.suffix`, or any host: the catch-all application, `server.default_host`)
 *   becomes an application with `route_order: listed`: its routes are the rule matches that
 *   apply to a request for that host, sorted as the Gateway API orders them (route hostname:
 *   exact, then the longest; then Exact path, the longest prefix, a method, the most headers,
 *   the most query parameters; then the oldest route, its namespace/name, the rule's order).
 *   A request for a host goes to the most specific listener hostname that matches it, and only
 *   that listener's routes apply. No match: `404`.
 * - A rule's `backendRefs` become a pool (`p_<namespace>_<service>_<port>`, members by `PUT`)
 *   or weighted `backends`; an invalid backendRef is a `500` backend of its weight, so a rule
 *   whose backends are all invalid answers `500`. Filters become policies: `headers`
 *   (RequestHeaderModifier, ResponseHeaderModifier, URLRewrite hostname), `rewrite`
 *   (URLRewrite path), `redirect` (RequestRedirect).
 *
 * Several Gateways share scalwsd's listeners: the listeners of one protocol and hostname are
 * served together whatever their port (the host table is one for every port); HTTP and HTTPS
 * listeners are told apart by the routes' `scheme`.
 */
import { type KubeMember, poolName, serviceMembers } from "./kube_pool.ts";
import type { KubeObject } from "./k8s_watch.ts";
import {
  type Attachment,
  backendProblem,
  byAge,
  type GatewayListener,
  type GatewayModel,
  keyOf,
  servicePort,
} from "./gateway_model.ts";
import { namespaceOf } from "./kube_pool.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

/** The domain of the catch-all application (`.invalid` never resolves: RFC 6761). */
export const ANY_HOST_DOMAIN = "any-host.gateway.invalid";

/** A scalwsd listener for one Gateway port. */
export interface PortListener {
  readonly port: number;
  readonly name: string;
  readonly https: boolean;
  /** Certificates of the port's HTTPS listeners, each once. */
  readonly certificates: readonly { id: string; cert: string; key: string }[];
}

/** What the objects give. */
export interface GatewayConfig {
  readonly listeners: readonly PortListener[];
  readonly upstreams: Record<string, Record<string, unknown>>;
  readonly tenants: Record<string, unknown>[];
  readonly members: ReadonlyMap<string, readonly KubeMember[]>;
  /** `ANY_HOST_DOMAIN` when a listener or route serves any host. */
  readonly defaultHost?: string;
  readonly warnings: readonly string[];
}

/** One rule match, placed for sorting. */
interface Placed {
  readonly hostRank: [number, number];
  readonly route: KubeObject;
  readonly ruleIndex: number;
  readonly matchIndex: number;
  readonly exact: boolean;
  readonly path: string;
  readonly method?: string;
  readonly headers: Record<string, string>;
  readonly query: Record<string, string>;
  readonly listener: GatewayListener;
  readonly rule: Any;
}

/** Exact hostnames first, then the longest; any host last. */
function hostRank(h: string | undefined): [number, number] {
  if (h === undefined) return [2, 0];
  return h.startsWith("*.") ? [1, -h.length] : [0, -h.length];
}

/** Whether hostname (or wildcard) `h` covers the key `k` (an exact name or a `*.` wildcard). */
function covers(h: string | undefined, k: string | undefined): boolean {
  if (h === undefined) return true;
  if (k === undefined) return false;
  if (h === k) return true;
  if (!h.startsWith("*.")) return false;
  return k.endsWith(h.slice(1)) && k.length > h.length - 1;
}

const methodRank = (p: Placed) => (p.method !== undefined ? 0 : 1);

function compare(a: Placed, b: Placed): number {
  return a.hostRank[0] - b.hostRank[0] || a.hostRank[1] - b.hostRank[1] ||
    (a.exact === b.exact ? 0 : a.exact ? -1 : 1) ||
    b.path.length - a.path.length ||
    methodRank(a) - methodRank(b) ||
    Object.keys(b.headers).length - Object.keys(a.headers).length ||
    Object.keys(b.query).length - Object.keys(a.query).length ||
    byAge(a.route, b.route) ||
    a.ruleIndex - b.ruleIndex ||
    a.matchIndex - b.matchIndex;
}

/** `$` is a template character in scalwsd's header and redirect values. */
function literal(s: string): string {
  return s.replaceAll("$", "$$$$");
}

/** Path with one trailing slash removed (not `/`): PathPrefix `/v2/` is `/v2`. */
function prefixPath(p: string): string {
  const t = p.replace(/\/+$/, "");
  return t === "" ? "/" : t;
}

/** Builds the configuration sections from the model. */
export function gatewayConfig(
  model: GatewayModel,
  o: { readonly endpointSlices: Iterable<KubeObject> },
): GatewayConfig {
  const warnings = [...model.warnings];
  const slices = [...o.endpointSlices];

  // Ports.
  const ports = new Map<number, { https: boolean; certs: Map<string, Any> }>();
  for (const gw of model.gateways) {
    for (const l of gw.listeners) {
      if (!l.usable) continue;
      let p = ports.get(l.port);
      if (p === undefined) {
        ports.set(l.port, p = { https: l.protocol === "HTTPS", certs: new Map() });
      }
      for (const c of l.certificates) p.certs.set(c.id, c);
    }
  }
  const listeners: PortListener[] = [];
  for (const [port, p] of [...ports].sort(([a], [b]) => a - b)) {
    // An HTTPS port without a certificate cannot be served.
    if (p.https && p.certs.size === 0) continue;
    listeners.push({
      port,
      name: `gw-${port}`,
      https: p.https,
      certificates: [...p.certs.values()],
    });
  }

  // Listener hostname "slots" per protocol: every listener of every Gateway with that protocol
  // and hostname (any port). HTTP and HTTPS listeners are told apart by the routes' `scheme`.
  const byProtocol = new Map<string, Map<string | undefined, GatewayListener[]>>();
  for (const gw of model.gateways) {
    for (const l of gw.listeners) {
      if (!l.usable) continue;
      let slots = byProtocol.get(l.protocol);
      if (slots === undefined) byProtocol.set(l.protocol, slots = new Map());
      const list = slots.get(l.hostname);
      if (list === undefined) slots.set(l.hostname, [l]);
      else list.push(l);
    }
  }
  const split = byProtocol.size > 1;
  /** The most specific listener hostname of `slots` that covers the key. */
  const slotOf = (
    slots: Map<string | undefined, GatewayListener[]>,
    k: string | undefined,
  ): string | undefined | null => {
    let best: string | undefined | null = null;
    for (const h of slots.keys()) {
      if (!covers(h, k)) continue;
      if (best === null) best = h;
      else {
        const a = hostRank(h);
        const b = hostRank(best);
        if (a[0] < b[0] || (a[0] === b[0] && a[1] < b[1])) best = h;
      }
    }
    return best;
  };

  const keys = new Set<string | undefined>();
  for (const slots of byProtocol.values()) for (const h of slots.keys()) keys.add(h);
  for (const a of model.attachments) for (const h of a.hostnames) keys.add(h);

  const upstreams: Record<string, Record<string, unknown>> = {};
  const poolTargets = new Map<string, { ns: string; svc: string; portName?: string }>();
  const applications: Record<string, unknown>[] = [];
  const ruleRuntime = new Map<string, { runtime: Any; policies: Any[] }>();

  const translate = (a: Attachment, rule: Any, ruleIndex: number) => {
    const id = `${keyOf(a.route)}#${ruleIndex}@${a.listener.port}`;
    let t = ruleRuntime.get(id);
    if (t === undefined) {
      t = ruleTranslation(a, rule, model, upstreams, poolTargets, warnings);
      ruleRuntime.set(id, t);
    }
    return t;
  };

  for (const k of [...keys].sort((x, y) => (x ?? "~") < (y ?? "~") ? -1 : 1)) {
    const slotListeners = new Set<GatewayListener>();
    for (const slots of byProtocol.values()) {
      const slot = slotOf(slots, k);
      if (slot !== null) { for (const l of slots.get(slot)!) slotListeners.add(l); }
    }
    if (slotListeners.size === 0) continue;
    const placed: Placed[] = [];
    for (const a of model.attachments) {
      if (!slotListeners.has(a.listener)) continue;
      // The most specific of the attachment's hostnames that covers the key.
      let best: string | undefined | null = null;
      for (const h of a.hostnames) {
        if (!covers(h, k)) continue;
        if (best === null) best = h;
        else {
          const x = hostRank(h);
          const y = hostRank(best);
          if (x[0] < y[0] || (x[0] === y[0] && x[1] < y[1])) best = h;
        }
      }
      if (best === null) continue;
      const rules = ((a.route as Any).spec?.rules ?? []) as Any[];
      rules.forEach((rule, ruleIndex) => {
        const matches = (rule.matches ?? []).length > 0 ? rule.matches as Any[] : [{}];
        matches.forEach((m: Any, matchIndex: number) => {
          const pathType = m.path?.type ?? "PathPrefix";
          if (pathType !== "Exact" && pathType !== "PathPrefix") {
            warnings.push(`httproute ${keyOf(a.route)}: path type ${pathType} is not supported`);
            return;
          }
          const headers: Record<string, string> = {};
          let unsupported = false;
          for (const h of (m.headers ?? []) as Any[]) {
            if ((h.type ?? "Exact") !== "Exact") unsupported = true;
            const n = String(h.name).toLowerCase();
            if (!(n in headers)) headers[n] = String(h.value);
          }
          const query: Record<string, string> = {};
          for (const q of (m.queryParams ?? []) as Any[]) {
            if ((q.type ?? "Exact") !== "Exact") unsupported = true;
            if (!(q.name in query)) query[String(q.name)] = String(q.value);
          }
          if (unsupported) {
            warnings.push(
              `httproute ${keyOf(a.route)}: only Exact header and query matches are supported`,
            );
            return;
          }
          const raw = typeof m.path?.value === "string" ? m.path.value : "/";
          placed.push({
            hostRank: hostRank(best!),
            route: a.route,
            ruleIndex,
            matchIndex,
            exact: pathType === "Exact",
            path: pathType === "Exact" ? raw : prefixPath(raw),
            ...(typeof m.method === "string" ? { method: m.method } : {}),
            headers,
            query,
            listener: a.listener,
            rule,
          });
        });
      });
    }
    placed.sort(compare);
    const routes = placed.map((p) => {
      const a = model.attachments.find((x) => x.route === p.route && x.listener === p.listener)!;
      const t = translate(a, p.rule, p.ruleIndex);
      const matchPrefix = p.exact ? undefined : p.path;
      const policies = t.policies.map((pol) =>
        pol.rewrite?.prefix !== undefined && pol.rewrite.prefix.from === null
          ? matchPrefix === undefined
            ? { rewrite: { regex: { match: "^/.*$", to: pol.rewrite.prefix.to } } }
            : { rewrite: { prefix: { from: matchPrefix, to: pol.rewrite.prefix.to } } }
          : pol
      );
      return {
        path: p.path,
        ...(p.exact ? { exact: true } : {}),
        ...(p.method !== undefined ? { methods: [p.method] } : {}),
        ...(Object.keys(p.headers).length > 0 ? { headers: p.headers } : {}),
        ...(Object.keys(p.query).length > 0 ? { query: p.query } : {}),
        ...(split ? { scheme: p.listener.protocol === "HTTPS" ? "https" : "http" } : {}),
        runtime: t.runtime,
        ...(policies.length > 0 ? { policies } : {}),
      };
    });
    const domain = k === undefined ? ANY_HOST_DOMAIN : k.startsWith("*.") ? `*${k}` : k;
    applications.push({
      name: k === undefined ? "any_host" : `h_${hash(domain)}`,
      domains: [domain],
      route_order: "listed",
      runtime: { type: "respond", status: 404, body: "no route\n" },
      ...(routes.length > 0 ? { routes } : {}),
    });
  }

  const members = new Map<string, KubeMember[]>();
  for (const [pool, t] of poolTargets) {
    members.set(pool, serviceMembers(slices, t.ns, t.svc, t.portName));
  }
  return {
    listeners,
    upstreams,
    tenants: applications.length === 0 ? [] : [{ name: "gateway", applications }],
    members,
    ...(applications.some((a) => a.name === "any_host") ? { defaultHost: ANY_HOST_DOMAIN } : {}),
    warnings,
  };
}

/** A short stable name part for a domain (application names are at most 63 characters). */
function hash(domain: string): string {
  const clean = domain.replace(/^\*+\./, "w.").replace(/[^a-z0-9-]/g, "-");
  if (clean.length <= 50) return clean;
  let h = 0;
  for (let i = 0; i < domain.length; i++) h = (Math.imul(h, 31) + domain.charCodeAt(i)) >>> 0;
  return `${clean.slice(0, 41)}-${h.toString(16).padStart(8, "0")}`;
}

/**
 * The runtime and policies of one rule. A `ReplacePrefixMatch` is returned as
 * `{rewrite: {prefix: {from: null, to}}}`: the caller fills in the match's prefix.
 */
function ruleTranslation(
  a: Attachment,
  rule: Any,
  model: GatewayModel,
  upstreams: Record<string, Record<string, unknown>>,
  poolTargets: Map<string, { ns: string; svc: string; portName?: string }>,
  warnings: string[],
): { runtime: Any; policies: Any[] } {
  const route = a.route;
  const rns = namespaceOf(route);
  const policies: Any[] = [];
  let redirect: Any | undefined;
  let failed = false;
  const hdr = (m: Any) => {
    const out: Any = {};
    if (Array.isArray(m?.set) && m.set.length > 0) {
      out.set = Object.fromEntries(m.set.map((h: Any) => [h.name, literal(String(h.value))]));
    }
    if (Array.isArray(m?.add) && m.add.length > 0) {
      out.add = Object.fromEntries(m.add.map((h: Any) => [h.name, literal(String(h.value))]));
    }
    if (Array.isArray(m?.remove) && m.remove.length > 0) out.remove = [...m.remove];
    return out;
  };
  for (const f of (rule.filters ?? []) as Any[]) {
    switch (f.type) {
      case "RequestHeaderModifier":
        policies.push({ headers: { request: hdr(f.requestHeaderModifier) } });
        break;
      case "ResponseHeaderModifier":
        policies.push({ headers: { response: hdr(f.responseHeaderModifier) } });
        break;
      case "URLRewrite": {
        const u = f.urlRewrite ?? {};
        if (typeof u.hostname === "string") {
          policies.push({ headers: { request: { set: { Host: literal(u.hostname) } } } });
        }
        if (u.path?.type === "ReplaceFullPath") {
          policies.push({
            rewrite: { regex: { match: "^/.*$", to: literal(String(u.path.replaceFullPath)) } },
          });
        } else if (u.path?.type === "ReplacePrefixMatch") {
          policies.push({
            rewrite: { prefix: { from: null, to: String(u.path.replacePrefixMatch ?? "/") } },
          });
        }
        break;
      }
      case "RequestRedirect":
        redirect = f.requestRedirect ?? {};
        break;
      default:
        // A filter scalwsd does not have must not be skipped: the rule answers 500.
        warnings.push(`httproute ${keyOf(route)}: filter ${f.type} is not supported (500)`);
        failed = true;
    }
  }
  if (failed) return { runtime: { type: "respond", status: 500 }, policies: [] };
  if (redirect !== undefined) {
    const scheme: string | undefined = redirect.scheme;
    const l = a.listener;
    let port: number | undefined = redirect.port;
    if (port === undefined) {
      port = scheme === "http" ? 80 : scheme === "https" ? 443 : l.port;
    }
    const effScheme = scheme ?? (l.protocol === "HTTPS" ? "https" : "http");
    const portText =
      (effScheme === "http" && port === 80) || (effScheme === "https" && port === 443)
        ? ""
        : `:${port}`;
    let path = "$path";
    if (redirect.path?.type === "ReplaceFullPath") {
      path = literal(String(redirect.path.replaceFullPath));
    } else if (redirect.path?.type === "ReplacePrefixMatch") {
      policies.push({
        rewrite: { prefix: { from: null, to: String(redirect.path.replacePrefixMatch ?? "/") } },
      });
    }
    const host = typeof redirect.hostname === "string" ? literal(redirect.hostname) : "$host";
    policies.push({
      redirect: {
        to: `${scheme === undefined ? "$scheme" : scheme}://${host}${portText}${path}$query`,
        status: redirect.statusCode === 301 ? 301 : 302,
      },
    });
    return { runtime: { type: "respond", status: 500 }, policies };
  }
  const backends: Any[] = [];
  for (const ref of (rule.backendRefs ?? []) as Any[]) {
    const weight = ref.weight === undefined ? 1 : Number(ref.weight);
    if (!(weight > 0)) continue;
    const problem = backendProblem(route, ref, model.services, model.referenceGrants);
    if (problem !== undefined) {
      backends.push({ status: 500, weight });
      continue;
    }
    const ns = ref.namespace ?? rns;
    const svc = model.services.get(`${ns}/${ref.name}`)!;
    const sp = servicePort(svc, ref.port);
    const pool = poolName(ns, ref.name, sp.port);
    if (upstreams[pool] === undefined) {
      upstreams[pool] = { members_from: "api" };
      poolTargets.set(pool, { ns, svc: ref.name, ...(sp.name ? { portName: sp.name } : {}) });
    }
    const same = backends.find((b) => b.pool === pool);
    if (same) same.weight += weight;
    else backends.push({ pool, weight });
  }
  let runtime: Any;
  if (backends.length === 0) runtime = { type: "respond", status: 500 };
  else if (backends.length === 1 && backends[0].pool !== undefined) {
    runtime = { type: "proxy", upstream: { pool: backends[0].pool }, preserve_host: true };
  } else if (backends.every((b) => b.pool === undefined)) {
    runtime = { type: "respond", status: 500 };
  } else {
    // Weights of 1..1000 for scalwsd: scaled down together when larger.
    const max = Math.max(...backends.map((b) => b.weight));
    const scaled = max > 1000
      ? backends.map((b) => ({ ...b, weight: Math.max(1, Math.round((b.weight * 1000) / max)) }))
      : backends;
    runtime = { type: "proxy", backends: scaled, preserve_host: true };
  }
  return { runtime, policies };
}
