/**
 * `scalwsd gateway` against the Gateway API conformance suite's reference, TLS and status
 * cases (ReferenceGrant given and taken away, invalid backendRefs answering `500`, disallowed
 * route kinds, the HTTPS listener, certificateRefs, observedGeneration, attachedRoutes), plus
 * listener conflicts: the suite's manifests on a fake API server, the statuses scalwsd writes
 * back, and real requests through scalwsd.
 */
import assert from "node:assert/strict";
import {
  accepted,
  type Conformance,
  INFRA,
  startConformance,
  stepper,
  WEB,
} from "./_support/gateway_harness.ts";

const SAME = `${INFRA}/same-namespace`;
const V1 = "infra-backend-v1";
const V2 = "infra-backend-v2";

// deno-lint-ignore no-explicit-any
type Obj = any;

const condition = (conditions: Obj[] | undefined, type: string) =>
  (conditions ?? []).find((c) => c.type === type);

/** Waits until the route's condition `type` for `gateway` has `status` (and `reason`). */
async function routeHas(
  c: Conformance,
  route: string,
  gateway: string,
  type: string,
  status: string,
  reason?: string,
): Promise<void> {
  await c.eventually(`${route} ${type} ${status} ${reason ?? ""}`, () => {
    const x = c.routeCondition(route, gateway, type);
    assert.equal(x?.status, status);
    if (reason !== undefined) assert.equal(x.reason, reason);
    assert.equal(x.observedGeneration, c.get("HTTPRoute", route).metadata.generation);
  });
}

/** Waits until a listener's conditions hold (`[type, status, reason?]`) with attachedRoutes. */
async function listenerHas(
  c: Conformance,
  gateway: string,
  name: string,
  want: [string, string, string?][],
  attachedRoutes: number,
): Promise<void> {
  await c.eventually(`${gateway} listener ${name}`, () => {
    const l = c.listener(gateway, name);
    assert.ok(l, "no listener status yet");
    assert.deepEqual(l.supportedKinds, [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute" }]);
    for (const [type, status, reason] of want) {
      const x = condition(l.conditions, type);
      assert.equal(x?.status, status, `${type}`);
      if (reason !== undefined) assert.equal(x.reason, reason);
      assert.equal(x.observedGeneration, c.get("Gateway", gateway).metadata.generation);
    }
    assert.equal(l.attachedRoutes, attachedRoutes);
  });
}

const httpsGateway = (name: string, ref: string, ns?: string) => `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ${name}, namespace: ${INFRA}}
spec:
  gatewayClassName: "{GATEWAY_CLASS_NAME}"
  listeners:
  - name: https
    port: 443
    protocol: HTTPS
    allowedRoutes: {namespaces: {from: All}}
    tls: {certificateRefs: [${ref}${ns ? `, namespace: ${ns}` : ""}}]}
`;

Deno.test({
  name: "scalwsd gateway passes the conformance suite's reference, TLS and status cases",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    await using c = await startConformance();
    const step = stepper(t, c);

    await step("HTTPRouteReferenceGrant", async () => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: reference-grant, namespace: ${WEB}}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: ${INFRA}}]
  to: [{group: "", kind: Service, name: web-backend}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: reference-grant, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  rules: [{backendRefs: [{name: web-backend, namespace: ${WEB}, port: 8080}]}]
`);
      await accepted(c, SAME, `${INFRA}/reference-grant`);
      await c.expect({ path: "/" }, { backend: "web-backend" });
      // The grant goes: the backend is no longer permitted.
      c.remove("ReferenceGrant", `${WEB}/reference-grant`);
      await c.expect({ path: "/" }, { status: 500 });
      await routeHas(
        c,
        `${INFRA}/reference-grant`,
        SAME,
        "ResolvedRefs",
        "False",
        "RefNotPermitted",
      );
    });

    const invalid = async (name: string, ref: string, reason: string, path = "/") => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  rules: [{backendRefs: [${ref}]}]
`);
      await routeHas(c, `${INFRA}/${name}`, SAME, "Accepted", "True");
      await routeHas(c, `${INFRA}/${name}`, SAME, "ResolvedRefs", "False", reason);
      await c.expect({ path }, { status: 500 });
    };

    await step("HTTPRouteInvalidCrossNamespaceBackendRef", async () => {
      await invalid(
        "invalid-cross-namespace-backend-ref",
        `{name: web-backend, namespace: ${WEB}, port: 8080}`,
        "RefNotPermitted",
      );
    });

    await step("HTTPRouteInvalidNonExistentBackendRef", async () => {
      await invalid(
        "invalid-nonexistent-backend-ref",
        `{name: nonexistent, namespace: ${INFRA}, port: 8080}`,
        "BackendNotFound",
      );
    });

    await step("HTTPRouteInvalidBackendRefUnknownKind", async () => {
      await invalid(
        "invalid-backend-ref-unknown-kind",
        "{group: unknownkind.example.com, kind: NonExistent, name: infra-backend-v1, port: 8080}",
        "InvalidKind",
        "/v2",
      );
    });

    await step("HTTPRouteDisallowedKind", async () => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: tlsroutes-only, namespace: ${INFRA}}
spec:
  gatewayClassName: "{GATEWAY_CLASS_NAME}"
  listeners:
  - name: tls
    port: 443
    protocol: TLS
    tls: {mode: Passthrough}
    allowedRoutes: {namespaces: {from: Same}, kinds: [{kind: TLSRoute}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: disallowed-kind, namespace: ${INFRA}}
spec:
  parentRefs: [{name: tlsroutes-only, namespace: ${INFRA}}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
`);
      const gw = `${INFRA}/tlsroutes-only`;
      await routeHas(c, `${INFRA}/disallowed-kind`, gw, "ResolvedRefs", "True");
      await routeHas(
        c,
        `${INFRA}/disallowed-kind`,
        gw,
        "Accepted",
        "False",
        "NotAllowedByListeners",
      );
      await c.eventually("no route attached to tlsroutes-only", () => {
        const l = c.listener(gw, "tls");
        assert.equal(l.attachedRoutes, 0);
        assert.equal(condition(l.conditions, "Accepted").reason, "UnsupportedProtocol");
      });
    });

    await step("UnsupportedValue: a RegularExpression match is refused, not ignored", async () => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: regex-path, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  hostnames: [regex.example]
  rules:
  - matches: [{path: {type: RegularExpression, value: "/v[0-9]+/.*"}}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
  - backendRefs: [{name: infra-backend-v2, port: 8080}]
`);
      const gw = `${INFRA}/same-namespace`;
      await routeHas(c, `${INFRA}/regex-path`, gw, "Accepted", "False", "UnsupportedValue");
      assert.match(
        c.routeCondition(`${INFRA}/regex-path`, gw, "Accepted").message,
        /path match type RegularExpression is not supported/,
      );
      // Not served without its match (which would send /v1/x to infra-backend-v2).
      await c.expect({ host: "regex.example", path: "/v1/x" }, { status: 404 });
    });

    await step("HTTPRouteHTTPSListener", async () => {
      c.api.put(
        "secrets",
        await c.tlsSecret(INFRA, "tls-validity-checks-certificate", [
          "example.org",
          "second-example.org",
          "unknown-example.org",
          "*.wildcard.org",
        ]),
      );
      const listener = (name: string, hostname?: string) =>
        `  - name: ${name}
    port: 443
    protocol: HTTPS
    ${hostname ? `hostname: "${hostname}"` : ""}
    allowedRoutes: {namespaces: {from: Same}}
    tls: {certificateRefs: [{group: "", kind: Secret, name: tls-validity-checks-certificate, namespace: ${INFRA}}]}`;
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: same-namespace-with-https-listener, namespace: ${INFRA}}
spec:
  gatewayClassName: "{GATEWAY_CLASS_NAME}"
  listeners:
${listener("https")}
${listener("https-with-hostname", "second-example.org")}
${listener("https-with-wildcard-hostname", "*.wildcard.org")}
${listener("https-with-hostname-matching-wildcard", "fourth-example.wildcard.org")}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: httproute-https-test, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace-with-https-listener}]
  hostnames: [example.org]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: httproute-https-test-no-hostname, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace-with-https-listener, sectionName: https-with-hostname}]
  rules: [{backendRefs: [{name: infra-backend-v2, port: 8080}]}]
`);
      const gw = `${INFRA}/same-namespace-with-https-listener`;
      await accepted(
        c,
        gw,
        `${INFRA}/httproute-https-test`,
        `${INFRA}/httproute-https-test-no-hostname`,
      );
      const cases: [string, number, string?][] = [
        ["example.org", 200, V1],
        ["unknown-example.org", 404],
        ["second-example.org", 200, V2],
      ];
      for (const [host, status, backend] of cases) {
        await c.eventually(`https://${host}/ -> ${status}`, async () => {
          const a = await c.sendTls(host, "/");
          assert.equal(a.status, status);
          assert.equal(a.echo?.backend, backend);
        });
      }
      c.remove("Secret", `${INFRA}/tls-validity-checks-certificate`);
    });

    await step(
      "an HTTP listener redirects to the HTTPS listener of the same hostname",
      async () => {
        c.api.put("secrets", await c.tlsSecret(INFRA, "site-cert", ["site.example"]));
        c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: site, namespace: ${INFRA}}
spec:
  gatewayClassName: "{GATEWAY_CLASS_NAME}"
  listeners:
  - {name: http, port: 80, protocol: HTTP, hostname: site.example}
  - name: https
    port: 443
    protocol: HTTPS
    hostname: site.example
    tls: {certificateRefs: [{name: site-cert}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: to-https, namespace: ${INFRA}}
spec:
  parentRefs: [{name: site, sectionName: http}]
  rules: [{filters: [{type: RequestRedirect, requestRedirect: {scheme: https, statusCode: 301}}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: ${INFRA}}
spec:
  parentRefs: [{name: site, sectionName: https}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
`);
        await accepted(c, `${INFRA}/site`, `${INFRA}/to-https`, `${INFRA}/app`);
        const a = await c.expect({ host: "site.example", path: "/cart?x=1" }, { status: 301 });
        assert.equal(a.headers.get("location"), "https://site.example/cart?x=1");
        await c.eventually("https://site.example/ -> v1", async () => {
          const r = await c.sendTls("site.example", "/cart");
          assert.equal(r.status, 200);
          assert.equal(r.echo?.backend, V1);
        });
        c.remove("Secret", `${INFRA}/site-cert`);
      },
    );

    await step("HTTPRouteObservedGenerationBump", async () => {
      const yaml = (backend: string) => `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: observed-generation-bump, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  rules: [{backendRefs: [{name: ${backend}, port: 8080}]}]
`;
      const route = `${INFRA}/observed-generation-bump`;
      c.apply(yaml(V1));
      await routeHas(c, route, SAME, "Accepted", "True");
      await routeHas(c, route, SAME, "ResolvedRefs", "True");
      const before = c.get("HTTPRoute", route).metadata.generation;
      c.apply(yaml(V2));
      assert.notEqual(c.get("HTTPRoute", route).metadata.generation, before);
      await routeHas(c, route, SAME, "Accepted", "True");
      await routeHas(c, route, SAME, "ResolvedRefs", "True");
      await c.expect({ path: "/" }, { backend: V2 });
    });

    await step("GatewaySecretReferenceGrantSpecific", async () => {
      c.api.put("secrets", await c.tlsSecret(WEB, "certificate", ["secret.example"]));
      c.apply(
        httpsGateway(
          "gateway-secret-reference-grant-specific",
          '{group: "", kind: Secret, name: certificate',
          WEB,
        ) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: reference-grant-specific, namespace: ${WEB}}
spec:
  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: ${INFRA}}]
  to: [{group: "", kind: Secret, name: certificate}]
`,
      );
      await listenerHas(c, `${INFRA}/gateway-secret-reference-grant-specific`, "https", [
        ["Programmed", "True", "Programmed"],
        ["ResolvedRefs", "True"],
      ], 0);
    });

    await step("GatewaySecretMissingReferenceGrant", async () => {
      c.apply(
        httpsGateway(
          "gateway-secret-missing-reference-grant",
          '{group: "", kind: Secret, name: certificate',
          WEB,
        ),
      );
      await listenerHas(c, `${INFRA}/gateway-secret-missing-reference-grant`, "https", [
        ["ResolvedRefs", "False", "RefNotPermitted"],
      ], 0);
      c.remove("Secret", `${WEB}/certificate`);
    });

    await step("GatewayInvalidTLSConfiguration", async () => {
      c.api.put(
        "secrets",
        await c.tlsSecret(INFRA, "tls-validity-checks-certificate", ["example.org"]),
      );
      c.apply(
        [
          httpsGateway(
            "gateway-certificate-nonexistent-secret",
            '{group: "", kind: Secret, name: nonexistent-certificate',
          ),
          httpsGateway(
            "gateway-certificate-unsupported-group",
            "{group: wrong.group.company.io, kind: Secret, name: tls-validity-checks-certificate",
          ),
          httpsGateway(
            "gateway-certificate-unsupported-kind",
            '{group: "", kind: WrongKind, name: tls-validity-checks-certificate',
          ),
          httpsGateway(
            "gateway-certificate-malformed-secret",
            '{group: "", kind: Secret, name: malformed-certificate',
          ),
        ].join("---\n") + `---
apiVersion: v1
kind: Secret
type: kubernetes.io/tls
metadata: {name: malformed-certificate, namespace: ${INFRA}}
data: {tls.crt: SGVsbG8gd29ybGQK, tls.key: SGVsbG8gd29ybGQK}
`,
      );
      for (
        const g of [
          "nonexistent-secret",
          "unsupported-group",
          "unsupported-kind",
          "malformed-secret",
        ]
      ) {
        await listenerHas(c, `${INFRA}/gateway-certificate-${g}`, "https", [
          ["ResolvedRefs", "False", "InvalidCertificateRef"],
          ["Programmed", "False"],
        ], 0);
      }
      c.remove("Secret", `${INFRA}/tls-validity-checks-certificate`);
    });

    await step("GatewayObservedGenerationBump", async () => {
      const yaml = (extra: string) => `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gateway-observed-generation-bump, namespace: ${INFRA}}
spec:
  gatewayClassName: "{GATEWAY_CLASS_NAME}"
  listeners:
  - {name: http, hostname: bar.com, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
${extra}`;
      const gw = `${INFRA}/gateway-observed-generation-bump`;
      const latest = () =>
        c.eventually(`${gw} conditions at its generation`, () => {
          const g = c.get("Gateway", gw);
          const conditions = [
            ...g.status.conditions,
            ...g.status.listeners.flatMap((l: Obj) => l.conditions),
          ];
          for (const x of conditions) assert.equal(x.observedGeneration, g.metadata.generation);
          assert.equal(g.status.listeners.length, g.spec.listeners.length);
        });
      c.apply(yaml(""));
      await latest();
      const before = c.get("Gateway", gw).metadata.generation;
      c.apply(yaml(
        "  - {name: alternate, hostname: foo.com, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}",
      ));
      assert.notEqual(c.get("Gateway", gw).metadata.generation, before);
      await latest();
    });

    await step("GatewayWithAttachedRoutes", async () => {
      const selector = "{kinds: [{kind: HTTPRoute}], namespaces: {from: Selector, selector: " +
        `{matchLabels: {kubernetes.io/metadata.name: ${INFRA}}}}}`;
      const route = (name: string, gw: string, extra = "", backend = V1) => `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}, namespace: ${INFRA}}
spec:
  ${extra}
  parentRefs: [{kind: Gateway, name: ${gw}, namespace: ${INFRA}}]
  rules: [{backendRefs: [{name: ${backend}, port: 8080}]}]
`;
      c.apply(
        `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gateway-with-one-attached-route, namespace: ${INFRA}}
spec:
  gatewayClassName: "{GATEWAY_CLASS_NAME}"
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: ${selector}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gateway-with-two-attached-routes, namespace: ${INFRA}}
spec:
  gatewayClassName: "{GATEWAY_CLASS_NAME}"
  listeners: [{name: http, port: 80, protocol: HTTP, hostname: foo.example.com, allowedRoutes: ${selector}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: unresolved-gateway-with-one-attached-unresolved-route, namespace: ${INFRA}}
spec:
  gatewayClassName: "{GATEWAY_CLASS_NAME}"
  listeners:
  - name: tls
    port: 443
    protocol: HTTPS
    allowedRoutes: ${selector}
    tls: {certificateRefs: [{group: "", kind: Secret, name: does-not-exist}], mode: Terminate}
` + route("http-route-1", "gateway-with-one-attached-route") +
          route("http-route-2", "gateway-with-two-attached-routes") +
          route("http-route-3", "gateway-with-two-attached-routes") +
          route(
            "http-route-not-accepted",
            "gateway-with-two-attached-routes",
            'hostnames: ["not-accepted.test.com"]',
          ) +
          `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: http-route-4, namespace: ${INFRA}}
spec:
  parentRefs: [{kind: Gateway, name: unresolved-gateway-with-one-attached-unresolved-route, namespace: ${INFRA}, sectionName: tls}]
  rules: [{backendRefs: [{name: does-not-exist, port: 8080}]}]
`,
      );
      await listenerHas(c, `${INFRA}/gateway-with-one-attached-route`, "http", [
        ["Accepted", "True"],
        ["ResolvedRefs", "True"],
      ], 1);
      await listenerHas(c, `${INFRA}/gateway-with-two-attached-routes`, "http", [
        ["Accepted", "True"],
        ["ResolvedRefs", "True"],
      ], 2);
      await routeHas(
        c,
        `${INFRA}/http-route-not-accepted`,
        `${INFRA}/gateway-with-two-attached-routes`,
        "Accepted",
        "False",
        "NoMatchingListenerHostname",
      );
      const unresolved = `${INFRA}/unresolved-gateway-with-one-attached-unresolved-route`;
      await listenerHas(
        c,
        unresolved,
        "tls",
        [["Programmed", "False"], ["ResolvedRefs", "False"]],
        1,
      );
      await routeHas(c, `${INFRA}/http-route-4`, unresolved, "ResolvedRefs", "False");
    });

    await step("HTTPRouteInvalidParentRefNotMatchingSectionName", async () => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: httproute-listener-not-matching-section-name, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace, namespace: ${INFRA}, port: 80, sectionName: http1}]
  rules: [{backendRefs: [{name: infra-backend-v1, kind: Service, port: 8080}]}]
`);
      const route = `${INFRA}/httproute-listener-not-matching-section-name`;
      await routeHas(c, route, SAME, "Accepted", "False", "NoMatchingParent");
      assert.equal(c.listener(SAME, "http").attachedRoutes, 0);
    });

    await step("HTTPRouteInvalidCrossNamespaceParentRef", async () => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: invalid-cross-namespace-parent-ref, namespace: ${WEB}}
spec:
  parentRefs: [{name: same-namespace, namespace: ${INFRA}}]
  rules: [{backendRefs: [{name: web-backend, port: 8080}]}]
`);
      const route = `${WEB}/invalid-cross-namespace-parent-ref`;
      await routeHas(c, route, SAME, "ResolvedRefs", "True");
      await routeHas(c, route, SAME, "Accepted", "False", "NotAllowedByListeners");
      assert.equal(c.listener(SAME, "http").attachedRoutes, 0);
    });

    await step("GatewayInvalidRouteKind", async () => {
      const gw = (name: string, kinds: string) => `
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ${name}, namespace: ${INFRA}}
spec:
  gatewayClassName: "{GATEWAY_CLASS_NAME}"
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}, kinds: ${kinds}}}]
`;
      c.apply(
        gw("gateway-only-invalid-route-kind", "[{kind: InvalidRoute}]") +
          gw(
            "gateway-supported-and-invalid-route-kind",
            "[{kind: InvalidRoute}, {kind: HTTPRoute}]",
          ),
      );
      for (
        const [name, kinds] of [["gateway-only-invalid-route-kind", []], [
          "gateway-supported-and-invalid-route-kind",
          [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute" }],
        ]] as const
      ) {
        await c.eventually(`${name} InvalidRouteKinds`, () => {
          const l = c.listener(`${INFRA}/${name}`, "http");
          assert.deepEqual(l?.supportedKinds, kinds);
          const x = condition(l.conditions, "ResolvedRefs");
          assert.equal(x.status, "False");
          assert.equal(x.reason, "InvalidRouteKinds");
          assert.equal(l.attachedRoutes, 0);
        });
      }
    });

    await step("GatewayListenerUnsupportedProtocol", async () => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gateway-only-unsupported-protocols, namespace: ${INFRA}}
spec:
  gatewayClassName: "{GATEWAY_CLASS_NAME}"
  listeners: [{name: invalid, port: 1111, protocol: INVALID}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gateway-supported-and-unsupported-protocols, namespace: ${INFRA}}
spec:
  gatewayClassName: "{GATEWAY_CLASS_NAME}"
  listeners: [{name: http, port: 80, protocol: HTTP}, {name: invalid, port: 1111, protocol: INVALID}]
`);
      const gateway = (name: string) => c.get("Gateway", `${INFRA}/${name}`);
      await c.eventually("Accepted of both Gateways", () => {
        const only = condition(
          gateway("gateway-only-unsupported-protocols").status?.conditions,
          "Accepted",
        );
        assert.equal(only?.status, "False");
        assert.equal(only.reason, "ListenersNotValid");
        const mixed = condition(
          gateway("gateway-supported-and-unsupported-protocols").status?.conditions,
          "Accepted",
        );
        assert.equal(mixed?.status, "True");
        assert.equal(mixed.reason, "ListenersNotValid");
        for (
          const [g, l, status, reason] of [
            ["gateway-only-unsupported-protocols", "invalid", "False", "UnsupportedProtocol"],
            ["gateway-supported-and-unsupported-protocols", "http", "True", "Accepted"],
            [
              "gateway-supported-and-unsupported-protocols",
              "invalid",
              "False",
              "UnsupportedProtocol",
            ],
          ]
        ) {
          const x = condition(c.listener(`${INFRA}/${g}`, l).conditions, "Accepted");
          assert.deepEqual([x.status, x.reason], [status, reason]);
        }
      });
      // Nothing listens for the invalid listener.
      assert.equal(c.gateway.server.bound.get("gw-1111"), undefined);
    });

    await step("GatewayInvalidParametersRef", async () => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: gateway-invalid-parameters-ref
  namespace: ${INFRA}
  annotations: {gateway-api/skip-this-for-readiness: "true"}
spec:
  gatewayClassName: "{GATEWAY_CLASS_NAME}"
  listeners: [{name: http, port: 80, protocol: HTTP}]
  infrastructure:
    parametersRef: {group: invalid.io, kind: InvalidParameters, name: invalid}
`);
      await c.eventually(
        "Accepted False InvalidParameters, every condition at its generation",
        () => {
          const g = c.get("Gateway", `${INFRA}/gateway-invalid-parameters-ref`);
          const x = condition(g.status?.conditions, "Accepted");
          assert.deepEqual([x?.status, x?.reason], ["False", "InvalidParameters"]);
          for (const y of g.status.conditions) {
            assert.equal(y.observedGeneration, g.metadata.generation);
          }
          for (const l of g.status.listeners) {
            for (const y of l.conditions) assert.equal(y.observedGeneration, g.metadata.generation);
          }
        },
      );
    });

    await step("PortUnavailable: a listener port scalwsd has no address for", async () => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: port-unavailable, namespace: ${INFRA}}
spec:
  gatewayClassName: "{GATEWAY_CLASS_NAME}"
  listeners:
  - {name: far, port: 65535, protocol: HTTP}
  - {name: http, port: 80, protocol: HTTP}
`);
      await listenerHas(c, `${INFRA}/port-unavailable`, "far", [
        ["Accepted", "False", "PortUnavailable"],
        ["Programmed", "False", "Invalid"],
      ], 0);
      await listenerHas(c, `${INFRA}/port-unavailable`, "http", [
        ["Accepted", "True", "Accepted"],
        ["Programmed", "True", "Programmed"],
      ], 0);
      const g = c.get("Gateway", `${INFRA}/port-unavailable`);
      assert.deepEqual(
        [
          condition(g.status.conditions, "Accepted").status,
          condition(g.status.conditions, "Accepted").reason,
        ],
        ["True", "ListenersNotValid"],
      );
    });

    await step("GatewayNameMaximumLength", async () => {
      const name = "gateway-name-maximum-length-" + "a".repeat(253 - 28);
      assert.equal(name.length, 253);
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: ${name}
  namespace: ${INFRA}
  annotations: {gateway-api/skip-this-for-readiness: "true"}
spec:
  gatewayClassName: "{GATEWAY_CLASS_NAME}"
  listeners: [{name: http, port: 80, protocol: HTTP}]
`);
      await c.eventually("the 253-character Gateway's conditions at its generation", () => {
        const g = c.get("Gateway", `${INFRA}/${name}`);
        assert.ok((g.status?.conditions ?? []).length > 0, "no conditions yet");
        for (const y of g.status.conditions) {
          assert.equal(y.observedGeneration, g.metadata.generation);
        }
      });
    });

    await step("GatewayClassObservedGenerationBump", async () => {
      const yaml = (description: string) => `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gatewayclass-observed-generation-bump}
spec: {controllerName: scalwsd.io/gateway-controller, description: ${description}}
status:
  conditions:
  - {type: example.com/Audited, status: "True", reason: Checked, message: "",
     lastTransitionTime: "2026-01-01T00:00:00Z"}
`;
      const latest = () =>
        c.eventually("the class's Accepted at its generation", () => {
          const g = c.get("GatewayClass", "gatewayclass-observed-generation-bump");
          const x = condition(g.status?.conditions, "Accepted");
          assert.equal(x?.status, "True");
          assert.equal(x.observedGeneration, g.metadata.generation);
          // The conformance features implemented, sorted by name as the specification requires.
          const names = (g.status.supportedFeatures ?? []).map((f: { name: string }) => f.name);
          assert.deepEqual(names, [
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
          ]);
          assert.deepEqual(names, [...names].sort());
          // Another controller's condition is kept, in its place (the specification's rule).
          assert.deepEqual(g.status.conditions.map((c: { type: string }) => c.type), [
            "example.com/Audited",
            "Accepted",
          ]);
        });
      c.apply(yaml("old"));
      await latest();
      const before =
        c.get("GatewayClass", "gatewayclass-observed-generation-bump").metadata.generation;
      c.apply(yaml("new"));
      assert.notEqual(
        c.get("GatewayClass", "gatewayclass-observed-generation-bump").metadata.generation,
        before,
      );
      await latest();
    });

    await step("GatewaySecretInvalidReferenceGrant", async () => {
      c.api.put("secrets", await c.tlsSecret(WEB, "certificate", ["secret.example"]));
      const grant = (name: string, ns: string, from: string, to: string) => `
---
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: ${name}, namespace: ${ns}}
spec: {from: [${from}], to: [${to}]}
`;
      const fromOk = `{group: gateway.networking.k8s.io, kind: Gateway, namespace: ${INFRA}}`;
      const toOk = '{group: "", kind: Secret, name: certificate}';
      c.apply(
        httpsGateway(
          "gateway-secret-invalid-reference-grant",
          '{group: "", kind: Secret, name: certificate',
          WEB,
        ) +
          grant(
            "reference-grant-wrong-namespace",
            "gateway-conformance-app-backend",
            fromOk,
            toOk,
          ) +
          grant(
            "reference-grant-wrong-from-group",
            WEB,
            `{group: not-the-group-youre-looking-for, kind: Gateway, namespace: ${INFRA}}`,
            toOk,
          ) +
          grant(
            "reference-grant-wrong-from-kind",
            WEB,
            `{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: ${INFRA}}`,
            toOk,
          ) +
          grant(
            "reference-grant-wrong-from-namespace",
            WEB,
            "{group: gateway.networking.k8s.io, kind: Gateway, namespace: not-the-namespace-youre-looking-for}",
            toOk,
          ) +
          grant(
            "reference-grant-wrong-to-group",
            WEB,
            fromOk,
            "{group: not-the-group-youre-looking-for, kind: Secret, name: not-the-certificate-youre-looking-for}",
          ) +
          grant(
            "reference-grant-wrong-to-kind",
            WEB,
            fromOk,
            '{group: "", kind: Service, name: certificate}',
          ) +
          grant(
            "reference-grant-wrong-to-name",
            WEB,
            fromOk,
            '{group: "", kind: Secret, name: not-the-certificate-youre-looking-for}',
          ),
      );
      await listenerHas(c, `${INFRA}/gateway-secret-invalid-reference-grant`, "https", [
        ["ResolvedRefs", "False", "RefNotPermitted"],
      ], 0);
    });

    await step("GatewaySecretReferenceGrantAllInNamespace", async () => {
      c.apply(
        httpsGateway(
          "gateway-secret-reference-grant-all-in-namespace",
          '{group: "", kind: Secret, name: certificate',
          WEB,
        ) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: reference-grant-all-in-namespace, namespace: ${WEB}}
spec:
  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: ${INFRA}}]
  to: [{group: "", kind: Secret}]
`,
      );
      await listenerHas(c, `${INFRA}/gateway-secret-reference-grant-all-in-namespace`, "https", [
        ["Programmed", "True", "Programmed"],
        ["ResolvedRefs", "True"],
      ], 0);
      c.remove("Secret", `${WEB}/certificate`);
    });

    await step("HTTPRouteInvalidReferenceGrant", async () => {
      const grant = (name: string, ns: string, from: string, to: string) => `
---
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: ${name}, namespace: ${ns}}
spec: {from: [${from}], to: [${to}]}
`;
      const fromOk = `{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: ${INFRA}}`;
      const toOk = '{group: "", kind: Service, name: web-backend}';
      c.apply(
        grant("reference-grant-wrong-namespace", INFRA, fromOk, toOk) +
          grant(
            "reference-grant-wrong-from-group",
            WEB,
            `{group: not-the-group-youre-looking-for, kind: HTTPRoute, namespace: ${INFRA}}`,
            toOk,
          ) +
          grant(
            "reference-grant-wrong-from-kind",
            WEB,
            `{group: gateway.networking.k8s.io, kind: Gateway, namespace: ${INFRA}}`,
            toOk,
          ) +
          grant(
            "reference-grant-wrong-from-namespace",
            WEB,
            "{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: not-the-namespace-youre-looking-for}",
            toOk,
          ) +
          grant(
            "reference-grant-wrong-to-group",
            WEB,
            fromOk,
            "{group: not-the-group-youre-looking-for, kind: Service, name: web-backend}",
          ) +
          grant(
            "reference-grant-wrong-to-kind",
            WEB,
            fromOk,
            '{group: "", kind: Secret, name: web-backend}',
          ) +
          grant(
            "reference-grant-wrong-to-name",
            WEB,
            fromOk,
            '{group: "", kind: Secret, name: not-the-service-youre-looking-for}',
          ) + `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: reference-grant, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  rules: [{backendRefs: [{name: web-backend, namespace: ${WEB}, port: 8080}]}]
`,
      );
      await routeHas(c, `${INFRA}/reference-grant`, SAME, "Accepted", "True");
      await routeHas(
        c,
        `${INFRA}/reference-grant`,
        SAME,
        "ResolvedRefs",
        "False",
        "RefNotPermitted",
      );
      const a = await c.expect({ path: "/" }, { status: 500 });
      assert.equal(a.echo, undefined);
    });

    await step("HTTPRoutePartiallyInvalidViaInvalidReferenceGrant", async () => {
      const APP = "gateway-conformance-app-backend";
      c.serviceOn(APP, "app-backend-v1", V1);
      c.serviceOn(APP, "app-backend-v2", V2);
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: invalid-reference-grant, namespace: ${APP}}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: ${INFRA}}]
  to: [{group: "", kind: Service, name: app-backend-v1}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: invalid-reference-grant, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /v2}}]
    backendRefs: [{name: app-backend-v2, namespace: ${APP}, port: 8080}]
  - backendRefs: [{name: app-backend-v1, namespace: ${APP}, port: 8080}]
`);
      const route = `${INFRA}/invalid-reference-grant`;
      await routeHas(c, route, SAME, "Accepted", "True");
      await routeHas(c, route, SAME, "ResolvedRefs", "False", "RefNotPermitted");
      await c.expect({ path: "/v2" }, { status: 500 });
      // The echo of app-backend-v1's endpoint (the member behind infra-backend-v1's address).
      await c.expect({ path: "/" }, { backend: V1 });
    });

    await step("GatewayModifyListeners", async () => {
      c.api.put(
        "secrets",
        await c.tlsSecret(INFRA, "tls-validity-checks-certificate", ["secure.test.com"]),
      );
      const https = `  - name: https
    port: 443
    protocol: HTTPS
    hostname: secure.test.com
    allowedRoutes: {namespaces: {from: All}}
    tls: {certificateRefs: [{group: "", kind: Secret, name: tls-validity-checks-certificate, namespace: ${INFRA}}]}`;
      const gateway = (name: string, listeners: string) => `
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ${name}, namespace: ${INFRA}}
spec:
  gatewayClassName: "{GATEWAY_CLASS_NAME}"
  listeners:
${listeners}
`;
      const route = (name: string, gw: string) => `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}, namespace: ${INFRA}}
spec:
  parentRefs: [{kind: Gateway, name: ${gw}, namespace: ${INFRA}}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
`;
      const http = (hostname?: string) =>
        `  - {name: http, port: 80, protocol: HTTP, ${
          hostname ? `hostname: ${hostname}, ` : ""
        }allowedRoutes: {namespaces: {from: All}}}`;
      c.apply(
        gateway("gateway-add-listener", https) + route("http-route-1", "gateway-add-listener") +
          gateway("gateway-remove-listener", `${https}\n${http()}`) +
          route("http-route-2", "gateway-remove-listener"),
      );
      const ok: [string, string][] = [["Accepted", "True"], ["ResolvedRefs", "True"]];
      await listenerHas(c, `${INFRA}/gateway-add-listener`, "https", ok, 1);
      // Add a listener: it is served, and the route attaches to it too.
      c.apply(gateway("gateway-add-listener", `${https}\n${http("data.test.com")}`));
      await listenerHas(c, `${INFRA}/gateway-add-listener`, "https", ok, 1);
      await listenerHas(c, `${INFRA}/gateway-add-listener`, "http", ok, 1);
      await c.expect({ host: "data.test.com", path: "/" }, { backend: V1 });
      // Remove one: its traffic stops, the other stays.
      c.apply(gateway("gateway-remove-listener", http()));
      await listenerHas(c, `${INFRA}/gateway-remove-listener`, "http", ok, 1);
      await c.eventually("the removed listener's status is gone", () => {
        assert.deepEqual(
          c.get("Gateway", `${INFRA}/gateway-remove-listener`).status.listeners.map((l: Obj) =>
            l.name
          ),
          ["http"],
        );
      });
      c.remove("Secret", `${INFRA}/tls-validity-checks-certificate`);
    });

    await step("listener conflicts: HostnameConflict and ProtocolConflict", async () => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: conflicts, namespace: ${INFRA}}
spec:
  gatewayClassName: "{GATEWAY_CLASS_NAME}"
  listeners:
  - {name: first, port: 80, protocol: HTTP, hostname: conflict.test}
  - {name: second, port: 80, protocol: HTTP, hostname: conflict.test}
  - name: tls-on-80
    port: 80
    protocol: HTTPS
    tls: {certificateRefs: [{name: none}]}
`);
      const gw = `${INFRA}/conflicts`;
      await c.eventually("conflicted listeners", () => {
        const reason = (l: string) => condition(c.listener(gw, l)?.conditions, "Conflicted");
        assert.equal(reason("first").status, "False");
        assert.equal(reason("second").status, "True");
        assert.equal(reason("second").reason, "HostnameConflict");
        assert.equal(reason("tls-on-80").status, "True");
        assert.equal(reason("tls-on-80").reason, "ProtocolConflict");
        assert.equal(condition(c.listener(gw, "second").conditions, "Programmed").status, "False");
      });
    });
  },
});
