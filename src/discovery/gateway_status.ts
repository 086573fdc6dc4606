/**
 * The status of the Gateway API objects `scalwsd gateway` serves (pure): the `PATCH`es
 * (`application/merge-patch+json` on the `/status` subresource) that bring GatewayClasses
 * (`Accepted`, `supportedFeatures`), Gateways (`Accepted`, `Programmed`, `addresses`, per
 * listener `Accepted`,
 * `Programmed`, `ResolvedRefs`, `Conflicted`, `attachedRoutes`, `supportedKinds`) and
 * HTTPRoutes (per parent of ours: `Accepted`, `ResolvedRefs`, with `observedGeneration`) to
 * what the model says. An object already showing it gets no patch, so the watch event a patch
 * causes ends the loop; a condition whose status did not change keeps its
 * `lastTransitionTime`. An HTTPRoute's parents written by other controllers are kept, and so are
 * a GatewayClass's or Gateway's conditions of types not ours.
 */
import type { KubeObject } from "./k8s_watch.ts";
import { loadBalancerEntry } from "./ingress_status.ts";
import { namespaceOf } from "./kube_pool.ts";
import {
  type Condition,
  condition,
  CONTROLLER_NAME,
  GATEWAY_GROUP,
  type GatewayModel,
  keyOf,
} from "./gateway_model.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

/** One status change to send. */
export interface GatewayStatusPatch {
  /** `gatewayclass/NAME`, `gateway/NS/NAME` or `httproute/NS/NAME`, for the log. */
  readonly what: string;
  readonly path: string;
  readonly body: string;
}

const API = `/apis/${GATEWAY_GROUP}/v1`;

/**
 * The conformance features scalwsd implements (`pkg/features` names of gateway-api v1.6), as a
 * GatewayClass's `status.supportedFeatures` lists them: sorted by name, as the specification
 * requires. The core of GATEWAY-HTTP (`Gateway`, `HTTPRoute`, `ReferenceGrant`) and the extended
 * HTTPRoute features whose conformance cases pass (docs/kubernetes.md).
 */
export const SUPPORTED_FEATURES: readonly string[] = [
  "Gateway",
  "HTTPRoute",
  "HTTPRouteHostRewrite",
  "HTTPRouteMethodMatching",
  "HTTPRoutePathRedirect",
  "HTTPRoutePathRewrite",
  "HTTPRoutePortRedirect",
  "HTTPRouteQueryParamMatching",
  "HTTPRouteResponseHeaderModification",
  "HTTPRouteSchemeRedirect",
  "ReferenceGrant",
];
const FEATURES = SUPPORTED_FEATURES.map((name) => ({ name }));

/** Conditions with times: an unchanged status keeps the time it had. */
function timed(conditions: readonly Condition[], old: unknown, now: string): Any[] {
  const before = Array.isArray(old) ? old as Any[] : [];
  return conditions.map((c) => {
    const o = before.find((b) => b?.type === c.type);
    return {
      ...c,
      lastTransitionTime: o !== undefined && o.status === c.status && o.lastTransitionTime
        ? o.lastTransitionTime
        : now,
    };
  });
}

/**
 * Our conditions merged into the object's list: conditions of other types (another controller's)
 * are kept where they were, as the specification requires; ours replace theirs or are added.
 */
function keepOthers(ours: Any[], old: unknown): Any[] {
  if (!Array.isArray(old)) return ours;
  const out = old.map((b) => ours.find((c) => c.type === b?.type) ?? b);
  for (const c of ours) if (!old.some((b) => b?.type === c.type)) out.push(c);
  return out;
}

/** The same, ignoring `lastTransitionTime` (and key order). */
function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(strip(a)) === JSON.stringify(strip(b));
}

function strip(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(strip);
  if (typeof v === "object" && v !== null) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      if (k === "lastTransitionTime") continue;
      const x = (v as Record<string, unknown>)[k];
      if (x === undefined) continue;
      out[k] = strip(x);
    }
    return out;
  }
  return v;
}

function path(kind: string, o: KubeObject): string {
  const name = encodeURIComponent(o.metadata.name);
  if (kind === "gatewayclasses") return `${API}/gatewayclasses/${name}/status`;
  return `${API}/namespaces/${encodeURIComponent(namespaceOf(o))}/${kind}/${name}/status`;
}

/** The patches that bring every object of ours to the model's status. */
export function gatewayStatusPatches(
  model: GatewayModel,
  o: {
    readonly addresses?: readonly string[];
    readonly now: string;
  },
): GatewayStatusPatch[] {
  const out: GatewayStatusPatch[] = [];
  for (const c of model.classes) {
    const old = (c as Any).status?.conditions;
    const want = keepOthers(timed([condition(c, "Accepted", true, "Accepted")], old, o.now), old);
    if (same(old, want) && same((c as Any).status?.supportedFeatures, FEATURES)) continue;
    out.push({
      what: `gatewayclass/${c.metadata.name}`,
      path: path("gatewayclasses", c),
      body: JSON.stringify({ status: { conditions: want, supportedFeatures: FEATURES } }),
    });
  }
  const addresses = (o.addresses ?? []).map((a) => {
    const e = loadBalancerEntry(a);
    return "ip" in e ? { type: "IPAddress", value: a } : { type: "Hostname", value: a };
  });
  for (const gw of model.gateways) {
    const g = gw.object;
    const old = (g as Any).status ?? {};
    const anyAccepted = gw.listeners.some((l) => l.usable);
    const anyProgrammed = gw.listeners.some((l) => l.programmed);
    const allAccepted = gw.listeners.every((l) => l.usable);
    const conditions = [
      gw.invalidParameters !== undefined
        ? condition(g, "Accepted", false, "InvalidParameters", gw.invalidParameters)
        : allAccepted
        ? condition(g, "Accepted", true, "Accepted")
        : anyAccepted
        ? condition(g, "Accepted", true, "ListenersNotValid", "some listeners are not valid")
        : condition(g, "Accepted", false, "ListenersNotValid", "no listener is valid"),
      anyProgrammed
        ? condition(g, "Programmed", true, "Programmed")
        : condition(g, "Programmed", false, "Invalid", "no listener is programmed"),
    ];
    const listeners = gw.listeners.map((l) => {
      const was = ((old.listeners ?? []) as Any[]).find((x) => x?.name === l.name);
      return {
        name: l.name,
        supportedKinds: l.supportedKinds.map((k) => ({ group: k.group, kind: k.kind })),
        attachedRoutes: l.attachedRoutes,
        conditions: timed(l.conditions, was?.conditions, o.now),
      };
    });
    const want = {
      addresses,
      conditions: keepOthers(timed(conditions, old.conditions, o.now), old.conditions),
      listeners,
    };
    if (
      same(old.addresses ?? [], want.addresses) && same(old.conditions, want.conditions) &&
      same(old.listeners, want.listeners)
    ) continue;
    out.push({
      what: `gateway/${keyOf(g)}`,
      path: path("gateways", g),
      body: JSON.stringify({ status: want }),
    });
  }
  return out;
}

/** The patches of the HTTPRoutes: ours per parent, others' parents kept. */
export function routeStatusPatches(
  model: GatewayModel,
  routes: Iterable<KubeObject>,
  o: { readonly now: string; readonly controllerName?: string },
): GatewayStatusPatch[] {
  const controller = o.controllerName ?? CONTROLLER_NAME;
  const out: GatewayStatusPatch[] = [];
  for (const route of routes) {
    const ours = model.routeParents.get(keyOf(route)) ?? [];
    const old: Any[] = (route as Any).status?.parents ?? [];
    const mine = old.filter((p) => p?.controllerName === controller);
    if (ours.length === 0 && mine.length === 0) continue;
    const others = old.filter((p) => p?.controllerName !== controller);
    const want = ours.map((p) => {
      const ref = {
        group: p.parentRef.group ?? GATEWAY_GROUP,
        kind: p.parentRef.kind ?? "Gateway",
        namespace: p.parentRef.namespace ?? namespaceOf(route),
        name: p.parentRef.name,
        ...(p.parentRef.sectionName !== undefined ? { sectionName: p.parentRef.sectionName } : {}),
        ...(p.parentRef.port !== undefined ? { port: p.parentRef.port } : {}),
      };
      const was = mine.find((m) => same(m.parentRef, ref));
      return {
        parentRef: ref,
        controllerName: controller,
        conditions: timed(p.conditions, was?.conditions, o.now),
      };
    });
    if (same(mine, want)) continue;
    out.push({
      what: `httproute/${keyOf(route)}`,
      path: path("httproutes", route),
      body: JSON.stringify({ status: { parents: [...others, ...want] } }),
    });
  }
  return out;
}
