import assert from "node:assert/strict";
import { granted, intersect, selects } from "./gateway_model.ts";
import { regexPrefix } from "./nginx_annotations.ts";

Deno.test("intersect: route and listener hostnames, *. matching one or more labels", () => {
  assert.equal(intersect("a.example.com", undefined), "a.example.com");
  assert.equal(intersect("a.example.com", "a.example.com"), "a.example.com");
  assert.equal(intersect("a.example.com", "b.example.com"), undefined);
  assert.equal(intersect("a.b.example.com", "*.example.com"), "a.b.example.com");
  assert.equal(intersect("example.com", "*.example.com"), undefined);
  assert.equal(intersect("*.example.com", "very.example.com"), "very.example.com");
  assert.equal(intersect("*.a.example.com", "*.example.com"), "*.a.example.com");
  assert.equal(intersect("*.example.com", "*.a.example.com"), "*.a.example.com");
  assert.equal(intersect("*.example.com", "*.example.org"), undefined);
});

Deno.test("selects: matchLabels and matchExpressions", () => {
  const labels = { team: "a", tier: "web" };
  assert.equal(selects({ matchLabels: { team: "a" } }, labels), true);
  assert.equal(selects({ matchLabels: { team: "b" } }, labels), false);
  assert.equal(
    selects({ matchExpressions: [{ key: "tier", operator: "In", values: ["web"] }] }, labels),
    true,
  );
  assert.equal(
    selects({ matchExpressions: [{ key: "tier", operator: "NotIn", values: ["web"] }] }, labels),
    false,
  );
  assert.equal(
    selects({ matchExpressions: [{ key: "x", operator: "DoesNotExist" }] }, labels),
    true,
  );
  assert.equal(selects(undefined, labels), false);
});

Deno.test("granted: a ReferenceGrant in the target namespace, from the kind, to the name or all", () => {
  const grant = (to: Record<string, string>) => ({
    metadata: { name: "g", namespace: "b" },
    spec: {
      from: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: "a" }],
      to: [to],
    },
  });
  const from = { group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: "a" };
  const to = { group: "", kind: "Service", namespace: "b", name: "web" };
  assert.equal(granted([grant({ group: "", kind: "Service", name: "web" })], from, to), true);
  assert.equal(granted([grant({ group: "", kind: "Service" })], from, to), true);
  assert.equal(granted([grant({ group: "", kind: "Service", name: "api" })], from, to), false);
  assert.equal(granted([grant({ group: "", kind: "Secret", name: "web" })], from, to), false);
  assert.equal(
    granted([grant({ group: "", kind: "Service" })], { ...from, namespace: "c" }, to),
    false,
  );
});

Deno.test("regexPrefix: the literal prefix of an ingress-nginx regex path", () => {
  assert.deepEqual(regexPrefix("/something(/|$)(.*)"), { prefix: "/something", partial: false });
  assert.deepEqual(regexPrefix("/api/(.*)"), { prefix: "/api", partial: false });
  assert.deepEqual(regexPrefix("/plain"), { prefix: "/plain", partial: false });
  assert.deepEqual(regexPrefix("/v1/api-(.*)"), { prefix: "/v1", partial: true });
});
