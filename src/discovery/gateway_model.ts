/**
 * The Kubernetes Gateway API objects as `scalwsd gateway` reads them (pure): which
 * GatewayClasses are ours (`spec.controllerName`), their Gateways' listeners (protocol, port,
 * hostname, TLS certificates, allowed routes, conflicts), and which HTTPRoutes attach to which
 * listeners, with every condition the specification asks for. `gateway_config.ts` turns the
 * result into scalwsd's configuration and `gateway_status.ts` into status patches; this file
 * decides nothing about either.
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import type { KubeObject } from "./k8s_watch.ts";
import { namespaceOf } from "./kube_pool.ts";
import { secretText } from "./kube_secret.ts";

/** The `spec.controllerName` of the GatewayClasses scalwsd serves by default. */
export const CONTROLLER_NAME = "scalwsd.io/gateway-controller";

/** The API group of the Gateway API. */
export const GATEWAY_GROUP = "gateway.networking.k8s.io";

// deno-lint-ignore no-explicit-any
type Any = any;

/** One status condition, without `lastTransitionTime` (the status writer keeps or sets it). */
export interface Condition {
  readonly type: string;
  readonly status: "True" | "False";
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration?: number;
}

/** A route kind a listener takes. */
export interface RouteKind {
  readonly group: string;
  readonly kind: string;
}

/** A certificate of a listener, read from a `kubernetes.io/tls` Secret. */
export interface ListenerCertificate {
  /** `<namespace>_<secret>`. */
  readonly id: string;
  readonly cert: string;
  readonly key: string;
}

/** One listener of one Gateway. */
export interface GatewayListener {
  readonly gateway: KubeObject;
  readonly name: string;
  readonly protocol: string;
  readonly port: number;
  /** Lower-cased; undefined: any host. */
  readonly hostname?: string;
  readonly certificates: ListenerCertificate[];
  readonly supportedKinds: RouteKind[];
  /** Takes routes (supported protocol, no conflict). */
  usable: boolean;
  /** Serves (usable, and HTTPS has a certificate). */
  programmed: boolean;
  attachedRoutes: number;
  conditions: Condition[];
  readonly allowed: { readonly from: string; readonly selector?: Any };
}

/** A Gateway of one of our classes and its listeners. */
export interface ModelGateway {
  readonly object: KubeObject;
  readonly listeners: GatewayListener[];
  /**
   * Why `spec.infrastructure.parametersRef` cannot be used (scalwsd has no parameters kind, so
   * any reference): the Gateway is then `Accepted: False` (`InvalidParameters`) and not served.
   */
  readonly invalidParameters?: string;
}

/** A route's attachment to one listener, with the hostnames the route serves there. */
export interface Attachment {
  readonly route: KubeObject;
  readonly listener: GatewayListener;
  /**
   * Lower-cased hostnames (exact, or `*.suffix`): the intersection of the route's hostnames
   * with the listener's; `undefined` for "any host".
   */
  readonly hostnames: readonly (string | undefined)[];
}

/** What `gatewayModel` needs. */
export interface GatewayObjects {
  readonly gatewayClasses: Iterable<KubeObject>;
  readonly gateways: Iterable<KubeObject>;
  readonly httpRoutes: Iterable<KubeObject>;
  readonly referenceGrants: Iterable<KubeObject>;
  readonly services: Iterable<KubeObject>;
  readonly secrets: Iterable<KubeObject>;
  readonly namespaces: Iterable<KubeObject>;
  /** Default `CONTROLLER_NAME`. */
  readonly controllerName?: string;
  /**
   * Whether a listener port can be served (scalwsd has an address for it); default every port.
   * A port that cannot is `Accepted: False` with `PortUnavailable`.
   */
  readonly portAvailable?: (port: number) => boolean;
}

/** The status one route has for one of its parents that is ours. */
export interface RouteParent {
  readonly parentRef: Any;
  readonly conditions: Condition[];
}

/** Every object that is ours, and how they fit. */
export interface GatewayModel {
  readonly classes: KubeObject[];
  readonly gateways: ModelGateway[];
  readonly attachments: Attachment[];
  /** Route key (`namespace/name`) -> its parents that are ours, in `parentRefs` order. */
  readonly routeParents: Map<string, RouteParent[]>;
  /** Routes attached somewhere, sorted oldest first (creation time, then namespace/name). */
  readonly routes: KubeObject[];
  readonly services: Map<string, KubeObject>;
  readonly referenceGrants: KubeObject[];
  readonly warnings: string[];
}

/** `namespace/name`. */
export function keyOf(o: KubeObject): string {
  return `${namespaceOf(o)}/${o.metadata.name}`;
}

/** `metadata.generation`, when the object has one. */
export function generationOf(o: KubeObject): number | undefined {
  const g = (o.metadata as Any).generation;
  return typeof g === "number" ? g : undefined;
}

/** A condition with the object's generation. */
export function condition(
  o: KubeObject,
  type: string,
  ok: boolean,
  reason: string,
  message = "",
): Condition {
  const g = generationOf(o);
  return {
    type,
    status: ok ? "True" : "False",
    reason,
    message,
    ...(g !== undefined ? { observedGeneration: g } : {}),
  };
}

/** Oldest first (creation time), then by namespace/name: the specification's tie-breaker. */
export function byAge(a: KubeObject, b: KubeObject): number {
  const ta = String((a.metadata as Any).creationTimestamp ?? "");
  const tb = String((b.metadata as Any).creationTimestamp ?? "");
  if (ta !== tb) return ta < tb ? -1 : 1;
  const ka = keyOf(a);
  const kb = keyOf(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/**
 * Whether a ReferenceGrant in `toNamespace` lets a `fromKind` in `fromNamespace` refer to the
 * `toKind` named `toName` (group "" for core kinds).
 */
export function granted(
  grants: readonly KubeObject[],
  from: { readonly group: string; readonly kind: string; readonly namespace: string },
  to: { readonly group: string; readonly kind: string; readonly namespace: string; name: string },
): boolean {
  for (const g of grants) {
    if (namespaceOf(g) !== to.namespace) continue;
    const spec = (g as Any).spec ?? {};
    const fromOk = ((spec.from ?? []) as Any[]).some((f) =>
      (f.group ?? "") === from.group && f.kind === from.kind && f.namespace === from.namespace
    );
    if (!fromOk) continue;
    const toOk = ((spec.to ?? []) as Any[]).some((t) =>
      (t.group ?? "") === to.group && t.kind === to.kind &&
      (t.name === undefined || t.name === "" || t.name === to.name)
    );
    if (toOk) return true;
  }
  return false;
}

/** The certificate and key of a TLS Secret, when both parse. */
function tlsPair(secret: KubeObject): { cert: string; key: string } | undefined {
  const cert = secretText(secret, "tls.crt");
  const key = secretText(secret, "tls.key");
  if (cert === undefined || key === undefined) return undefined;
  try {
    new X509Certificate(cert);
    createPrivateKey(key);
  } catch {
    return undefined;
  }
  return { cert, key };
}

/** Whether a label selector (`matchLabels`, `matchExpressions`) selects these labels. */
export function selects(selector: Any, labels: Record<string, string>): boolean {
  if (selector === undefined || selector === null) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[k] !== v) return false;
  }
  for (const e of (selector.matchExpressions ?? []) as Any[]) {
    const has = Object.hasOwn(labels, e.key);
    const values: string[] = e.values ?? [];
    switch (e.operator) {
      case "In":
        if (!has || !values.includes(labels[e.key])) return false;
        break;
      case "NotIn":
        if (has && values.includes(labels[e.key])) return false;
        break;
      case "Exists":
        if (!has) return false;
        break;
      case "DoesNotExist":
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/**
 * The intersection of a route hostname and a listener hostname (`*.` wildcards match one or
 * more labels, as the Gateway API defines them); undefined when they do not intersect.
 */
export function intersect(route: string, listener: string | undefined): string | undefined {
  if (listener === undefined) return route;
  if (route === listener) return route;
  const rw = route.startsWith("*.");
  const lw = listener.startsWith("*.");
  if (!rw && !lw) return undefined;
  if (lw && !rw) return route.endsWith(listener.slice(1)) ? route : undefined;
  if (rw && !lw) return listener.endsWith(route.slice(1)) ? listener : undefined;
  // Both wildcards: the longer one, when it is under the shorter.
  if (route.endsWith(listener.slice(1))) return route;
  if (listener.endsWith(route.slice(1))) return listener;
  return undefined;
}

const HTTP_ROUTE: RouteKind = { group: GATEWAY_GROUP, kind: "HTTPRoute" };

/** Builds the model; every problem is a condition or a warning, never an exception. */
export function gatewayModel(o: GatewayObjects): GatewayModel {
  const controller = o.controllerName ?? CONTROLLER_NAME;
  const warnings: string[] = [];
  const classes = [...o.gatewayClasses].filter((c) =>
    (c as Any).spec?.controllerName === controller
  );
  const classNames = new Set(classes.map((c) => c.metadata.name));
  const secrets = new Map<string, KubeObject>();
  for (const s of o.secrets) secrets.set(keyOf(s), s);
  const services = new Map<string, KubeObject>();
  for (const s of o.services) services.set(keyOf(s), s);
  const nsLabels = new Map<string, Record<string, string>>();
  for (const n of o.namespaces) {
    nsLabels.set(n.metadata.name, {
      "kubernetes.io/metadata.name": n.metadata.name,
      ...((n.metadata as Any).labels ?? {}),
    });
  }
  const grants = [...o.referenceGrants];

  const gateways: ModelGateway[] = [...o.gateways]
    .filter((g) => classNames.has((g as Any).spec?.gatewayClassName))
    .sort(byAge)
    .map((g) => {
      const listeners = listenersOf(g, secrets, grants, o.portAvailable ?? (() => true));
      const ref = (g as Any).spec?.infrastructure?.parametersRef;
      if (ref === undefined || ref === null) return { object: g, listeners };
      for (const l of listeners) l.usable = l.programmed = false;
      return {
        object: g,
        listeners,
        invalidParameters: `parametersRef ${ref.group ?? ""}/${ref.kind}/${ref.name}: ` +
          "scalwsd takes no parameters",
      };
    });

  // Conflicts on one port, over every Gateway served (they share scalwsd's listeners): the
  // first protocol a port is given wins; within one Gateway, a second listener with the same
  // port and hostname conflicts.
  const portProtocol = new Map<number, string>();
  for (const gw of gateways) {
    const seen = new Set<string>();
    for (const l of gw.listeners) {
      if (!l.usable) continue;
      const proto = portProtocol.get(l.port);
      if (proto === undefined) portProtocol.set(l.port, l.protocol);
      else if (proto !== l.protocol) {
        conflict(l, "ProtocolConflict", `port ${l.port} already serves ${proto}`);
        continue;
      }
      const k = `${l.port}/${l.hostname ?? ""}`;
      if (seen.has(k)) {
        conflict(l, "HostnameConflict", `another listener has port ${l.port} and this hostname`);
        continue;
      }
      seen.add(k);
    }
  }
  for (const gw of gateways) {
    for (const l of gw.listeners) {
      l.conditions.push(
        condition(gw.object, "Programmed", l.programmed, l.programmed ? "Programmed" : "Invalid"),
      );
      if (!l.conditions.some((c) => c.type === "Conflicted")) {
        l.conditions.push(condition(gw.object, "Conflicted", false, "NoConflicts"));
      }
    }
  }

  const byKey = new Map<string, ModelGateway>();
  for (const gw of gateways) byKey.set(keyOf(gw.object), gw);
  const attachments: Attachment[] = [];
  const routeParents = new Map<string, RouteParent[]>();
  const attached: KubeObject[] = [];
  for (const route of [...o.httpRoutes].sort(byAge)) {
    const rns = namespaceOf(route);
    const parents: RouteParent[] = [];
    let any = false;
    for (const ref of ((route as Any).spec?.parentRefs ?? []) as Any[]) {
      if ((ref.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || (ref.kind ?? "Gateway") !== "Gateway") {
        continue;
      }
      const gw = byKey.get(`${ref.namespace ?? rns}/${ref.name}`);
      if (gw === undefined) continue;
      const accepted = attach(route, gw, ref, nsLabels);
      for (const a of accepted.attachments) {
        a.listener.attachedRoutes++;
        attachments.push(a);
      }
      if (accepted.attachments.length > 0) any = true;
      parents.push({
        parentRef: ref,
        conditions: [accepted.condition, resolvedRefs(route, services, grants)],
      });
    }
    if (parents.length > 0) routeParents.set(keyOf(route), parents);
    if (any) attached.push(route);
  }
  return {
    classes,
    gateways,
    attachments,
    routeParents,
    routes: attached,
    services,
    referenceGrants: grants,
    warnings,
  };
}

function conflict(l: GatewayListener, reason: string, message: string): void {
  l.usable = false;
  l.programmed = false;
  l.conditions.push(condition(l.gateway, "Conflicted", true, reason, message));
}

/** The listeners of a Gateway, with their Accepted and ResolvedRefs conditions. */
function listenersOf(
  gw: KubeObject,
  secrets: Map<string, KubeObject>,
  grants: readonly KubeObject[],
  portAvailable: (port: number) => boolean,
): GatewayListener[] {
  const gns = namespaceOf(gw);
  return (((gw as Any).spec?.listeners ?? []) as Any[]).map((l): GatewayListener => {
    const protocol = String(l.protocol ?? "");
    const known = protocol === "HTTP" || protocol === "HTTPS";
    const portOk = portAvailable(Number(l.port));
    const supported = known && portOk;
    const allowedRoutes = l.allowedRoutes ?? {};
    const conditions: Condition[] = [];
    // Kinds: HTTPRoute only; others are dropped and named in ResolvedRefs.
    const kinds: RouteKind[] = [];
    let invalidKinds = false;
    if (Array.isArray(allowedRoutes.kinds) && allowedRoutes.kinds.length > 0) {
      for (const k of allowedRoutes.kinds as Any[]) {
        if ((k.group ?? GATEWAY_GROUP) === GATEWAY_GROUP && k.kind === "HTTPRoute") {
          if (kinds.length === 0) kinds.push(HTTP_ROUTE);
        } else invalidKinds = true;
      }
    } else if (known) kinds.push(HTTP_ROUTE);
    const certificates: ListenerCertificate[] = [];
    let refProblem: { reason: string; message: string } | undefined;
    if (protocol === "HTTPS") {
      const tls = l.tls ?? {};
      if ((tls.mode ?? "Terminate") !== "Terminate") {
        refProblem = { reason: "InvalidCertificateRef", message: "only tls.mode Terminate" };
      }
      for (const ref of (tls.certificateRefs ?? []) as Any[]) {
        const ns = ref.namespace ?? gns;
        if ((ref.group ?? "") !== "" || (ref.kind ?? "Secret") !== "Secret") {
          refProblem ??= {
            reason: "InvalidCertificateRef",
            message: `certificateRef ${ref.name}: not a core Secret`,
          };
          continue;
        }
        if (
          ns !== gns &&
          !granted(grants, { group: GATEWAY_GROUP, kind: "Gateway", namespace: gns }, {
            group: "",
            kind: "Secret",
            namespace: ns,
            name: ref.name,
          })
        ) {
          refProblem ??= {
            reason: "RefNotPermitted",
            message: `no ReferenceGrant in ${ns} for Secret ${ref.name}`,
          };
          continue;
        }
        const secret = secrets.get(`${ns}/${ref.name}`);
        const pair = secret === undefined ? undefined : tlsPair(secret);
        if (pair === undefined) {
          refProblem ??= {
            reason: "InvalidCertificateRef",
            message: `Secret ${ns}/${ref.name} ${
              secret === undefined ? "not found" : "has no valid tls.crt and tls.key"
            }`,
          };
          continue;
        }
        certificates.push({ id: `${ns}_${ref.name}`, ...pair });
      }
      if (certificates.length === 0) {
        refProblem ??= { reason: "InvalidCertificateRef", message: "no certificateRefs" };
      }
    }
    conditions.push(
      supported
        ? condition(gw, "Accepted", true, "Accepted")
        : !known
        ? condition(gw, "Accepted", false, "UnsupportedProtocol", `protocol ${protocol}`)
        : condition(gw, "Accepted", false, "PortUnavailable", `no address to serve port ${l.port}`),
    );
    if (invalidKinds) {
      conditions.push(
        condition(gw, "ResolvedRefs", false, "InvalidRouteKinds", "only HTTPRoute is supported"),
      );
    } else if (refProblem !== undefined) {
      conditions.push(condition(gw, "ResolvedRefs", false, refProblem.reason, refProblem.message));
    } else conditions.push(condition(gw, "ResolvedRefs", true, "ResolvedRefs"));
    const hostname = typeof l.hostname === "string" && l.hostname !== ""
      ? l.hostname.toLowerCase()
      : undefined;
    return {
      gateway: gw,
      name: String(l.name),
      protocol,
      port: Number(l.port),
      ...(hostname !== undefined ? { hostname } : {}),
      certificates,
      supportedKinds: kinds,
      usable: supported,
      programmed: supported && certificates.length > 0 === (protocol === "HTTPS") &&
        refProblem === undefined,
      attachedRoutes: 0,
      conditions,
      allowed: {
        from: allowedRoutes.namespaces?.from ?? "Same",
        ...(allowedRoutes.namespaces?.selector
          ? { selector: allowedRoutes.namespaces.selector }
          : {}),
      },
    };
  });
}

/** The listeners a parentRef attaches the route to, and its Accepted condition there. */
function attach(
  route: KubeObject,
  gw: ModelGateway,
  ref: Any,
  nsLabels: Map<string, Record<string, string>>,
): { attachments: Attachment[]; condition: Condition } {
  const rns = namespaceOf(route);
  const gns = namespaceOf(gw.object);
  const candidates = gw.listeners.filter((l) =>
    (ref.sectionName === undefined || ref.sectionName === l.name) &&
    (ref.port === undefined || Number(ref.port) === l.port)
  );
  if (candidates.length === 0) {
    return {
      attachments: [],
      condition: condition(route, "Accepted", false, "NoMatchingParent", "no such listener"),
    };
  }
  const allowed = candidates.filter((l) => {
    if (!l.usable || !l.supportedKinds.some((k) => k.kind === "HTTPRoute")) return false;
    if (l.allowed.from === "All") return true;
    if (l.allowed.from === "Same") return rns === gns;
    if (l.allowed.from === "Selector") return selects(l.allowed.selector, nsLabels.get(rns) ?? {});
    return false;
  });
  if (allowed.length === 0) {
    return {
      attachments: [],
      condition: condition(route, "Accepted", false, "NotAllowedByListeners"),
    };
  }
  const routeHosts = (((route as Any).spec?.hostnames ?? []) as unknown[])
    .filter((h): h is string => typeof h === "string" && h !== "")
    .map((h) => h.toLowerCase());
  const attachments: Attachment[] = [];
  for (const l of allowed) {
    let hostnames: (string | undefined)[];
    if (routeHosts.length === 0) hostnames = [l.hostname];
    else {
      hostnames = [];
      for (const h of routeHosts) {
        const i = intersect(h, l.hostname);
        if (i !== undefined && !hostnames.includes(i)) hostnames.push(i);
      }
    }
    if (hostnames.length > 0) attachments.push({ route, listener: l, hostnames });
  }
  if (attachments.length === 0) {
    return {
      attachments,
      condition: condition(route, "Accepted", false, "NoMatchingListenerHostname"),
    };
  }
  const unsupported = unsupportedValue(route);
  if (unsupported !== undefined) {
    return {
      attachments: [],
      condition: condition(route, "Accepted", false, "UnsupportedValue", unsupported),
    };
  }
  return { attachments, condition: condition(route, "Accepted", true, "Accepted") };
}

/**
 * The first match type scalwsd does not implement (path other than `Exact` and `PathPrefix`,
 * header or query parameter other than `Exact`), as a message; undefined when there is none.
 * The specification's answer is `Accepted: False` with `UnsupportedValue`: the route is not
 * served, rather than served without the match.
 */
function unsupportedValue(route: KubeObject): string | undefined {
  const rules = ((route as Any).spec?.rules ?? []) as Any[];
  for (let r = 0; r < rules.length; r++) {
    for (const m of (rules[r]?.matches ?? []) as Any[]) {
      const path = m?.path?.type ?? "PathPrefix";
      if (path !== "Exact" && path !== "PathPrefix") {
        return `rules[${r}]: path match type ${path} is not supported (Exact, PathPrefix)`;
      }
      for (const [field, what] of [["headers", "header"], ["queryParams", "query param"]]) {
        for (const h of (m?.[field] ?? []) as Any[]) {
          const type = h?.type ?? "Exact";
          if (type !== "Exact") {
            return `rules[${r}]: ${what} match type ${type} is not supported (Exact)`;
          }
        }
      }
    }
  }
  return undefined;
}

/** Why a backendRef cannot be used; undefined when it can. */
export function backendProblem(
  route: KubeObject,
  ref: Any,
  services: Map<string, KubeObject>,
  grants: readonly KubeObject[],
): { reason: string; message: string } | undefined {
  const rns = namespaceOf(route);
  if ((ref.group ?? "") !== "" || (ref.kind ?? "Service") !== "Service") {
    return { reason: "InvalidKind", message: `backendRef ${ref.name}: not a core Service` };
  }
  const ns = ref.namespace ?? rns;
  if (
    ns !== rns &&
    !granted(grants, { group: GATEWAY_GROUP, kind: "HTTPRoute", namespace: rns }, {
      group: "",
      kind: "Service",
      namespace: ns,
      name: ref.name,
    })
  ) {
    return { reason: "RefNotPermitted", message: `no ReferenceGrant in ${ns} for ${ref.name}` };
  }
  const svc = services.get(`${ns}/${ref.name}`);
  if (svc === undefined) {
    return { reason: "BackendNotFound", message: `Service ${ns}/${ref.name} not found` };
  }
  if (servicePort(svc, ref.port) === undefined) {
    return {
      reason: "BackendNotFound",
      message: `Service ${ns}/${ref.name} has no port ${ref.port}`,
    };
  }
  return undefined;
}

/** The Service port object numbered `port`. */
export function servicePort(svc: KubeObject, port: unknown): Any | undefined {
  return (((svc as Any).spec?.ports ?? []) as Any[]).find((p) => p.port === Number(port));
}

function resolvedRefs(
  route: KubeObject,
  services: Map<string, KubeObject>,
  grants: readonly KubeObject[],
): Condition {
  for (const rule of ((route as Any).spec?.rules ?? []) as Any[]) {
    for (const ref of (rule.backendRefs ?? []) as Any[]) {
      const p = backendProblem(route, ref, services, grants);
      if (p !== undefined) return condition(route, "ResolvedRefs", false, p.reason, p.message);
    }
  }
  return condition(route, "ResolvedRefs", true, "ResolvedRefs");
}
