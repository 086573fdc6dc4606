/**
 * The `status.loadBalancer` of the Ingresses scalwsd serves (pure): which Ingresses need a
 * `PATCH` of their status subresource so that `kubectl get ingress` shows the addresses clients
 * reach scalwsd on (`--publish-status-address`, as ingress-nginx names it).
 */
import type { KubeObject } from "./k8s_watch.ts";

/** One `status.loadBalancer.ingress` entry. */
export type LoadBalancerIngress = { readonly ip: string } | { readonly hostname: string };

/** A status change to send. */
export interface StatusPatch {
  readonly namespace: string;
  readonly name: string;
  /** The path of the status subresource. */
  readonly path: string;
  /** A JSON merge patch (`application/merge-patch+json`). */
  readonly body: string;
}

// deno-lint-ignore no-explicit-any
type Any = any;

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** `ip` for an IPv4 or IPv6 address, else `hostname`. */
export function loadBalancerEntry(address: string): LoadBalancerIngress {
  return IPV4.test(address) || address.includes(":") ? { ip: address } : { hostname: address };
}

function same(a: unknown, b: readonly LoadBalancerIngress[]): boolean {
  if (!Array.isArray(a) || a.length !== b.length) return false;
  return a.every((x: Any, i) => {
    const want = b[i] as Any;
    return (x?.ip ?? "") === (want.ip ?? "") && (x?.hostname ?? "") === (want.hostname ?? "");
  });
}

/**
 * The patches that bring every Ingress of class `cls` to `addresses` (in that order). An
 * Ingress already showing them gets none, so the watch event a patch causes ends the loop.
 */
export function statusPatches(
  ingresses: Iterable<KubeObject>,
  o: { readonly ingressClass: string; readonly addresses: readonly string[] },
): StatusPatch[] {
  const want = o.addresses.map(loadBalancerEntry);
  const out: StatusPatch[] = [];
  for (const ing of ingresses) {
    const a = ing as Any;
    const cls = a.spec?.ingressClassName ??
      a.metadata?.annotations?.["kubernetes.io/ingress.class"];
    if (cls !== o.ingressClass) continue;
    if (same(a.status?.loadBalancer?.ingress, want)) continue;
    const namespace = ing.metadata.namespace ?? "default";
    const name = ing.metadata.name;
    out.push({
      namespace,
      name,
      path: `/apis/networking.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/ingresses/${
        encodeURIComponent(name)
      }/status`,
      body: JSON.stringify({ status: { loadBalancer: { ingress: want } } }),
    });
  }
  return out.sort((x, y) => (x.path < y.path ? -1 : 1));
}
