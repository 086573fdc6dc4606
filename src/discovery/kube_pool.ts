/**
 * What `scalwsd ingress` and `scalwsd gateway` share about Services (pure): the pool name of a
 * Service port (`p_<namespace>_<service>_<port>`, cut to 63 characters with a hash) and its
 * members, the ready endpoints of the Service's EndpointSlices, set with `PUT` by the caller.
 */
import type { KubeObject } from "./k8s_watch.ts";

/** A member for `PUT`. */
export interface KubeMember {
  readonly address: string;
  readonly weight: number;
}

// deno-lint-ignore no-explicit-any
type Any = any;

function sanitize(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9_-]/g, "-");
}

/** A configuration name from parts; long ones are cut and end with a short hash. */
export function nameOf(...parts: string[]): string {
  const n = parts.map(sanitize).join("_");
  if (n.length <= 63) return n;
  let h = 0;
  for (let i = 0; i < n.length; i++) h = (Math.imul(h, 31) + n.charCodeAt(i)) >>> 0;
  return `${n.slice(0, 54)}_${h.toString(16).padStart(8, "0")}`;
}

/** The pool of a Service port: `p_<namespace>_<service>_<port>`. */
export function poolName(namespace: string, service: string, port: number): string {
  return nameOf("p", namespace, service, String(port));
}

/** `metadata.namespace`, or `default`. */
export function namespaceOf(o: KubeObject): string {
  return o.metadata.namespace ?? "default";
}

/**
 * The members of a Service port: the ready endpoints (terminating ones left out, so their
 * requests drain) of the Service's EndpointSlices, on the slice port named like the Service
 * port; sorted by address, without duplicates.
 */
export function serviceMembers(
  slices: readonly KubeObject[],
  namespace: string,
  service: string,
  portName: string | undefined,
): KubeMember[] {
  const seen = new Set<string>();
  const list: KubeMember[] = [];
  for (const s of slices) {
    const labels = (s.metadata as Any).labels ?? {};
    if (namespaceOf(s) !== namespace || labels["kubernetes.io/service-name"] !== service) continue;
    const sp = ((s as Any).ports ?? []).find((p: Any) => (p.name ?? "") === (portName ?? ""));
    if (sp === undefined || typeof sp.port !== "number") continue;
    for (const e of ((s as Any).endpoints ?? []) as Any[]) {
      if (e.conditions?.ready === false || e.conditions?.terminating === true) continue;
      for (const a of (e.addresses ?? []) as unknown[]) {
        if (typeof a !== "string") continue;
        const address = a.includes(":") ? `[${a}]:${sp.port}` : `${a}:${sp.port}`;
        if (seen.has(address)) continue;
        seen.add(address);
        list.push({ address, weight: 1 });
      }
    }
  }
  return list.sort((a, b) => (a.address < b.address ? -1 : 1));
}
