import assert from "node:assert/strict";
import { loadBalancerEntry, statusPatches } from "./ingress_status.ts";
import type { KubeObject } from "./k8s_watch.ts";

Deno.test("loadBalancerEntry: IPv4 and IPv6 addresses are ip, names are hostname", () => {
  assert.deepEqual(loadBalancerEntry("10.0.0.1"), { ip: "10.0.0.1" });
  assert.deepEqual(loadBalancerEntry("2001:db8::1"), { ip: "2001:db8::1" });
  assert.deepEqual(loadBalancerEntry("lb.example.com"), { hostname: "lb.example.com" });
});

Deno.test("statusPatches: only Ingresses of the class whose status differs", () => {
  const ing = (name: string, cls: string, status?: unknown) => ({
    metadata: { namespace: "shop", name },
    spec: { ingressClassName: cls },
    ...(status === undefined ? {} : { status }),
  });
  const done = { loadBalancer: { ingress: [{ ip: "10.0.0.1" }, { hostname: "lb.test" }] } };
  const patches = statusPatches([
    ing("new", "scalwsd"),
    ing("theirs", "nginx"),
    ing("done", "scalwsd", done),
    ing("stale", "scalwsd", { loadBalancer: { ingress: [{ ip: "10.0.0.1" }] } }),
    {
      metadata: {
        namespace: "x y",
        name: "old",
        annotations: { "kubernetes.io/ingress.class": "scalwsd" },
      } as KubeObject["metadata"],
    },
  ], { ingressClass: "scalwsd", addresses: ["10.0.0.1", "lb.test"] });
  assert.deepEqual(patches.map((p) => p.path), [
    "/apis/networking.k8s.io/v1/namespaces/shop/ingresses/new/status",
    "/apis/networking.k8s.io/v1/namespaces/shop/ingresses/stale/status",
    "/apis/networking.k8s.io/v1/namespaces/x%20y/ingresses/old/status",
  ]);
  assert.deepEqual(JSON.parse(patches[0].body), { status: done });
  // An empty list clears the status.
  assert.deepEqual(
    JSON.parse(
      statusPatches([ing("done", "scalwsd", done)], {
        ingressClass: "scalwsd",
        addresses: [],
      })[0].body,
    ),
    { status: { loadBalancer: { ingress: [] } } },
  );
});
