/**
 * `scalwsd gateway` against the Gateway API conformance suite's routing cases (read from
 * kubernetes-sigs/gateway-api `conformance/tests/`, see docs/kubernetes.md): each step applies
 * the case's manifests to a fake API server, waits for the route's status as the suite does,
 * then sends the suite's requests through scalwsd to real echo members.
 */
import assert from "node:assert/strict";
import { yamlBlocks } from "../tools/doc_examples.ts";
import { accepted, INFRA, startConformance, stepper, WEB } from "./_support/gateway_harness.ts";

const SAME = `${INFRA}/same-namespace`;

const V1 = "infra-backend-v1";
const V2 = "infra-backend-v2";
const V3 = "infra-backend-v3";

Deno.test({
  name: "scalwsd gateway passes the conformance suite's HTTPRoute routing cases",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    await using c = await startConformance();
    const step = stepper(t, c);

    await step("HTTPRouteSimpleSameNamespace", async () => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: gateway-conformance-infra-test, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
`);
      await accepted(c, SAME, `${INFRA}/gateway-conformance-infra-test`);
      const a = await c.expect({ path: "/" }, { backend: V1 });
      assert.equal(a.echo!.namespace, INFRA);
    });

    await step("HTTPRouteCrossNamespace", async () => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cross-namespace, namespace: ${WEB}}
spec:
  parentRefs: [{name: backend-namespaces, namespace: ${INFRA}}]
  rules: [{backendRefs: [{name: web-backend, port: 8080}]}]
`);
      await accepted(c, `${INFRA}/backend-namespaces`, `${WEB}/cross-namespace`);
      const a = await c.expect({ path: "/" }, { backend: "web-backend" });
      assert.equal(a.echo!.namespace, WEB);
    });

    await step("HTTPRouteExactPathMatching", async () => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: exact-matching, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
  - matches: [{path: {type: Exact, value: /one}}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
  - matches: [{path: {type: Exact, value: /two}}]
    backendRefs: [{name: infra-backend-v2, port: 8080}]
`);
      await accepted(c, SAME, `${INFRA}/exact-matching`);
      await c.expect({ path: "/one" }, { backend: V1 });
      await c.expect({ path: "/two" }, { backend: V2 });
      for (const path of ["/", "/one/example", "/two/", "/Two"]) {
        await c.expect({ path }, { status: 404 });
      }
    });

    await step("HTTPRouteMatching", async () => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: matching, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /}}, {headers: [{name: version, value: one}]}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /v2}}, {headers: [{name: version, value: two}]}]
    backendRefs: [{name: infra-backend-v2, port: 8080}]
`);
      await accepted(c, SAME, `${INFRA}/matching`);
      const cases: [string, Record<string, string>, string][] = [
        ["/", {}, V1],
        ["/example", {}, V1],
        ["/", { Version: "one" }, V1],
        ["/v2", {}, V2],
        ["/v2/example", {}, V2],
        ["/", { Version: "two" }, V2],
        ["/v2/", {}, V2],
        ["/v2example", {}, V1],
        ["/foo/v2/example", {}, V1],
      ];
      for (const [path, headers, backend] of cases) await c.expect({ path, headers }, { backend });
    });

    await step("HTTPRouteMatchingAcrossRoutes", async () => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: matching-part1, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  hostnames: [example.com, example.net]
  rules:
  - matches: [{path: {type: PathPrefix, value: /}}, {headers: [{name: version, value: one}]}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: matching-part2, namespace: ${INFRA}}
spec:
  hostnames: [example.com]
  parentRefs: [{name: same-namespace}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /v2}}, {headers: [{name: version, value: two}]}]
    backendRefs: [{name: infra-backend-v2, port: 8080}]
`);
      await accepted(c, SAME, `${INFRA}/matching-part1`, `${INFRA}/matching-part2`);
      const cases: [string, string, Record<string, string>, string][] = [
        ["example.com", "/", {}, V1],
        ["example.com", "/example", {}, V1],
        ["example.net", "/example", {}, V1],
        ["example.com", "/example", { Version: "one" }, V1],
        ["example.com", "/v2", {}, V2],
        ["example.net", "/v2", {}, V1],
        ["example.com", "/v2/example", {}, V2],
        ["example.com", "/", { Version: "two" }, V2],
      ];
      for (const [host, path, headers, backend] of cases) {
        await c.expect({ host, path, headers }, { backend });
      }
    });

    await step("HTTPRouteHeaderMatching", async () => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: header-matching, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
  - matches: [{headers: [{name: version, value: one}]}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
  - matches: [{headers: [{name: version, value: two}]}]
    backendRefs: [{name: infra-backend-v2, port: 8080}]
  - matches: [{headers: [{name: version, value: two}, {name: color, value: orange}]}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
  - matches: [{headers: [{name: color, value: blue}]}, {headers: [{name: color, value: green}]}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
  - matches: [{headers: [{name: color, value: red}]}, {headers: [{name: color, value: yellow}]}]
    backendRefs: [{name: infra-backend-v2, port: 8080}]
`);
      await accepted(c, SAME, `${INFRA}/header-matching`);
      const cases: [Record<string, string>, string | 404][] = [
        [{ Version: "one" }, V1],
        [{ Version: "two" }, V2],
        [{ Version: "two", Color: "orange" }, V1],
        [{ Version: "two", Color: "blue" }, V2],
        [{ Color: "orange" }, 404],
        [{ "Some-Other-Header": "one" }, 404],
        [{ Color: "blue" }, V1],
        [{ Color: "green" }, V1],
        [{ Color: "red" }, V2],
        [{ Color: "yellow" }, V2],
        [{ Color: "purple" }, 404],
      ];
      for (const [headers, want] of cases) {
        await c.expect({ path: "/", headers }, want === 404 ? { status: 404 } : { backend: want });
      }
    });

    await step("HTTPRouteQueryParamMatching", async () => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: query-param-matching, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
  - matches: [{queryParams: [{name: animal, value: whale}]}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
  - matches: [{queryParams: [{name: animal, value: dolphin}]}]
    backendRefs: [{name: infra-backend-v2, port: 8080}]
  - matches:
    - queryParams: [{name: animal, value: dolphin}, {name: color, value: blue}]
    - queryParams: [{name: ANIMAL, value: Whale}]
    backendRefs: [{name: infra-backend-v3, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /path1}, queryParams: [{name: animal, value: whale}]}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
  - matches: [{headers: [{name: version, value: one}], queryParams: [{name: animal, value: whale}]}]
    backendRefs: [{name: infra-backend-v2, port: 8080}]
  - matches:
    - path: {type: PathPrefix, value: /path2}
      headers: [{name: version, value: two}]
      queryParams: [{name: animal, value: whale}]
    backendRefs: [{name: infra-backend-v3, port: 8080}]
  - matches:
    - path: {type: PathPrefix, value: /path3}
      queryParams: [{name: animal, value: shark}]
    - path: {type: PathPrefix, value: /path4}
      headers: [{name: version, value: three}]
      queryParams: [{name: animal, value: kraken}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /path5}}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
  - matches: [{queryParams: [{name: animal, value: hydra}]}]
    backendRefs: [{name: infra-backend-v2, port: 8080}]
  - matches: [{headers: [{name: version, value: four}]}]
    backendRefs: [{name: infra-backend-v3, port: 8080}]
`);
      await accepted(c, SAME, `${INFRA}/query-param-matching`);
      const cases: [string, Record<string, string>, string | 404][] = [
        ["/?animal=whale", {}, V1],
        ["/?animal=dolphin", {}, V2],
        ["/?animal=dolphin&color=blue", {}, V3],
        ["/?ANIMAL=Whale", {}, V3],
        ["/?animal=whale&otherparam=irrelevant", {}, V1],
        ["/?animal=dolphin&color=yellow", {}, V2],
        ["/?color=blue", {}, 404],
        ["/?animal=dog", {}, 404],
        ["/?animal=whaledolphin", {}, 404],
        ["/", {}, 404],
        ["/path1?animal=whale", {}, V1],
        ["/?animal=whale", { version: "one" }, V2],
        ["/path2?animal=whale", { version: "two" }, V3],
        ["/path3?animal=shark", {}, V1],
        ["/path4?animal=kraken", { version: "three" }, V1],
        ["/?animal=shark", {}, 404],
        ["/path4?animal=kraken", {}, 404],
        ["/path5?animal=hydra", {}, V1],
        ["/?animal=hydra", { version: "four" }, V3],
      ];
      for (const [path, headers, want] of cases) {
        await c.expect({ path, headers }, want === 404 ? { status: 404 } : { backend: want });
      }
    });

    await step("HTTPRouteMethodMatching", async () => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: method-matching, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
  - matches: [{method: POST}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
  - matches: [{method: GET}]
    backendRefs: [{name: infra-backend-v2, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /path1}, method: GET}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
  - matches: [{headers: [{name: version, value: one}], method: PUT}]
    backendRefs: [{name: infra-backend-v2, port: 8080}]
  - matches:
    - path: {type: PathPrefix, value: /path2}
      headers: [{name: version, value: two}]
      method: POST
    backendRefs: [{name: infra-backend-v3, port: 8080}]
  - matches:
    - path: {type: PathPrefix, value: /path3}
      method: PATCH
    - path: {type: PathPrefix, value: /path4}
      headers: [{name: version, value: three}]
      method: DELETE
    backendRefs: [{name: infra-backend-v1, port: 8080}]
  - matches: [{path: {type: PathPrefix, value: /path5}}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
  - matches: [{method: PATCH}]
    backendRefs: [{name: infra-backend-v2, port: 8080}]
  - matches: [{headers: [{name: version, value: four}]}]
    backendRefs: [{name: infra-backend-v3, port: 8080}]
`);
      await accepted(c, SAME, `${INFRA}/method-matching`);
      const cases: [string, string, Record<string, string>, string | 404][] = [
        ["POST", "/", {}, V1],
        ["GET", "/", {}, V2],
        ["HEAD", "/", {}, 404],
        ["GET", "/path1", {}, V1],
        ["PUT", "/", { version: "one" }, V2],
        ["POST", "/path2", { version: "two" }, V3],
        ["PATCH", "/path3", {}, V1],
        ["DELETE", "/path4", { version: "three" }, V1],
        ["PUT", "/", {}, 404],
        ["DELETE", "/path4", {}, 404],
        ["PATCH", "/path5", {}, V1],
        ["PATCH", "/", { version: "four" }, V2],
      ];
      for (const [method, path, headers, want] of cases) {
        await c.expect(
          { method, path, headers },
          want === 404 ? { status: 404 } : { backend: want },
        );
      }
    });

    await step("HTTPRouteWeight", async () => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: weighted-backends, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
  - backendRefs:
    - {name: infra-backend-v1, port: 8080, weight: 70}
    - {name: infra-backend-v2, port: 8080, weight: 30}
    - {name: infra-backend-v3, port: 8080, weight: 0}
`);
      await accepted(c, SAME, `${INFRA}/weighted-backends`);
      await c.expect({ path: "/" }, { status: 200 });
      // Smooth weighted round robin: exactly 70 and 30 of every 100.
      const seen = new Map<string, number>();
      for (let i = 0; i < 100; i++) {
        const a = await c.send({ path: "/" });
        assert.equal(a.status, 200);
        seen.set(a.echo!.backend, (seen.get(a.echo!.backend) ?? 0) + 1);
      }
      assert.deepEqual(Object.fromEntries(seen), { [V1]: 70, [V2]: 30 });
    });

    await step("HTTPRouteHostnameIntersection", async () => {
      const route = (
        name: string,
        parent: string,
        hosts: string[],
        path: string | null,
        backend: string,
      ) => `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}, namespace: ${INFRA}}
spec:
  parentRefs: [{name: ${parent}, namespace: ${INFRA}}]
  hostnames: ${JSON.stringify(hosts)}
  rules:
  - ${
        path === null
          ? ""
          : `matches: [{path: {type: PathPrefix, value: ${path}}}]\n    `
      }backendRefs: [{name: ${backend}, port: 8080}]
`;
      const gw = "httproute-hostname-intersection";
      c.apply(
        `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ${gw}, namespace: ${INFRA}}
spec:
  gatewayClassName: "{GATEWAY_CLASS_NAME}"
  listeners:
  - {name: listener-1, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Same}}, hostname: very.specific.com}
  - {name: listener-2, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Same}}, hostname: "*.wildcard.io"}
  - {name: listener-3, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Same}}, hostname: "*.anotherwildcard.io"}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ${gw}-all, namespace: ${INFRA}}
spec:
  gatewayClassName: "{GATEWAY_CLASS_NAME}"
  listeners:
  - {name: listener-1, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Same}}}
` +
          route(
            "specific-host-matches-listener-specific-host",
            gw,
            ["non.matching.com", "*.nonmatchingwildcard.io", "very.specific.com"],
            "/s1",
            V1,
          ) +
          route(
            "specific-host-matches-listener-wildcard-host",
            gw,
            [
              "non.matching.com",
              "wildcard.io",
              "foo.wildcard.io",
              "bar.wildcard.io",
              "foo.bar.wildcard.io",
            ],
            "/s2",
            V2,
          ) +
          route(
            "wildcard-host-matches-listener-specific-host",
            gw,
            ["non.matching.com", "*.specific.com"],
            "/s3",
            V3,
          ) +
          route(
            "wildcard-host-matches-listener-wildcard-host",
            gw,
            ["*.anotherwildcard.io"],
            "/s4",
            V1,
          ) +
          route("no-intersecting-hosts", gw, ["specific.but.wrong.com", "wildcard.io"], "/s5", V2) +
          route(
            `${gw}-all`,
            `${gw}-all`,
            ["first.com", "sub.first.com", "second.com", "sub.second.com"],
            null,
            V2,
          ),
      );
      await accepted(
        c,
        `${INFRA}/${gw}`,
        ...[
          "specific-host-matches-listener-specific-host",
          "specific-host-matches-listener-wildcard-host",
          "wildcard-host-matches-listener-specific-host",
          "wildcard-host-matches-listener-wildcard-host",
        ].map((r) => `${INFRA}/${r}`),
      );
      const cases: [string, string, string | 404][] = [
        ["very.specific.com", "/s1", V1],
        ["very.specific.com:1234", "/s1", V1],
        ["non.matching.com", "/s1", 404],
        ["foo.nonmatchingwildcard.io", "/s1", 404],
        ["foo.wildcard.io", "/s1", 404],
        ["very.specific.com", "/non-matching-prefix", 404],
        ["foo.wildcard.io", "/s2", V2],
        ["bar.wildcard.io", "/s2", V2],
        ["foo.bar.wildcard.io", "/s2", V2],
        ["non.matching.com", "/s2", 404],
        ["wildcard.io", "/s2", 404],
        ["very.specific.com", "/s2", 404],
        ["foo.wildcard.io", "/non-matching-prefix", 404],
        ["very.specific.com", "/s3", V3],
        ["non.matching.com", "/s3", 404],
        ["foo.specific.com", "/s3", 404],
        ["foo.wildcard.io", "/s3", 404],
        ["foo.anotherwildcard.io", "/s4", V1],
        ["bar.anotherwildcard.io", "/s4", V1],
        ["foo.bar.anotherwildcard.io", "/s4", V1],
        ["anotherwildcard.io", "/s4", 404],
        ["foo.wildcard.io", "/s4", 404],
        ["very.specific.com", "/s4", 404],
        ["foo.anotherwildcard.io", "/non-matching-prefix", 404],
        // No intersecting hostnames: not accepted, nothing served.
        ["specific.but.wrong.com", "/s5", 404],
        ["wildcard.io", "/s5", 404],
        // The Gateway without listener hostnames.
        ["first.com", "/", V2],
        ["sub.first.com", "/", V2],
        ["second.com", "/", V2],
        ["sub.second.com", "/", V2],
        ["third.com", "/", 404],
        ["sub.third.com", "/", 404],
      ];
      for (const [host, path, want] of cases) {
        await c.expect({ host, path }, want === 404 ? { status: 404 } : { backend: want });
      }
      const na = c.routeCondition(`${INFRA}/no-intersecting-hosts`, `${INFRA}/${gw}`, "Accepted");
      assert.equal(na.status, "False");
      assert.equal(na.reason, "NoMatchingListenerHostname");
      // Only accepted routes count.
      const counts = ["listener-1", "listener-2", "listener-3"].map((l) => {
        const s = c.listener(`${INFRA}/${gw}`, l);
        assert.deepEqual(s.supportedKinds, [{
          group: "gateway.networking.k8s.io",
          kind: "HTTPRoute",
        }]);
        for (const type of ["Accepted", "ResolvedRefs"]) {
          assert.equal(s.conditions.find((x: { type: string }) => x.type === type).status, "True");
        }
        return s.attachedRoutes;
      });
      assert.deepEqual(counts, [2, 1, 1]);
    });

    await step("HTTPRouteListenerHostnameMatching", async () => {
      const gw = "httproute-listener-hostname-matching";
      const route = (name: string, sections: string[], backend: string) => `
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}, namespace: ${INFRA}}
spec:
  parentRefs: ${
        JSON.stringify(sections.map((s) => ({ name: gw, namespace: INFRA, sectionName: s })))
      }
  rules: [{backendRefs: [{name: ${backend}, port: 8080}]}]
`;
      c.apply(
        `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ${gw}, namespace: ${INFRA}}
spec:
  gatewayClassName: "{GATEWAY_CLASS_NAME}"
  listeners:
  - {name: listener-1, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Same}}, hostname: bar.com}
  - {name: listener-2, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Same}}, hostname: foo.bar.com}
  - {name: listener-3, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Same}}, hostname: "*.bar.com"}
  - {name: listener-4, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Same}}, hostname: "*.foo.com"}
` + route("backend-v1", ["listener-1"], V1) + route("backend-v2", ["listener-2"], V2) +
          route("backend-v3", ["listener-3", "listener-4"], V3),
      );
      await accepted(
        c,
        `${INFRA}/${gw}`,
        ...["backend-v1", "backend-v2", "backend-v3"].map((r) => `${INFRA}/${r}`),
      );
      const cases: [string, string | 404][] = [
        ["bar.com", V1],
        ["foo.bar.com", V2],
        ["baz.bar.com", V3],
        ["boo.bar.com", V3],
        ["multiple.prefixes.bar.com", V3],
        ["multiple.prefixes.foo.com", V3],
        ["foo.com", 404],
        ["no.matching.host", 404],
      ];
      for (const [host, want] of cases) {
        await c.expect({ host, path: "/" }, want === 404 ? { status: 404 } : { backend: want });
      }
    });
    await step("HTTPRoutePathMatchOrder", async () => {
      const rule = (type: string, value: string, backend: string) =>
        `  - matches: [{path: {type: ${type}, value: ${value}}}]\n    backendRefs: [{name: ${backend}, port: 8080}]`;
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: path-matching-order, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
${rule("Exact", "/match", V1)}
${rule("Exact", "/match/exact", V2)}
${rule("Exact", "/match/exact/one", V3)}
${rule("PathPrefix", "/match/", V3)}
${rule("PathPrefix", "/match/prefix/", V1)}
${rule("PathPrefix", "/match/prefix/one", V2)}
`);
      await accepted(c, SAME, `${INFRA}/path-matching-order`);
      const cases: [string, string][] = [
        ["/match/exact/one", V3],
        ["/match/exact", V2],
        ["/match", V1],
        ["/match/prefix/one/any", V2],
        ["/match/prefix/any", V1],
        ["/match/any", V3],
      ];
      for (const [path, backend] of cases) await c.expect({ path }, { backend });
    });

    await step("HTTPRouteNoBackendRefs", async () => {
      c.apply(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: omitted-backendrefs, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
  - matches: [{path: {type: Exact, value: /omitted-no-forward}}]
  - matches: [{path: {type: Exact, value: /empty-no-forward}}]
    backendRefs: []
  - matches: [{path: {type: PathPrefix, value: /}}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
`);
      await accepted(c, SAME, `${INFRA}/omitted-backendrefs`);
      await c.expect({ path: "/forward" }, { backend: V1 });
      await c.expect({ path: "/omitted-no-forward" }, { status: 500 });
      await c.expect({ path: "/empty-no-forward" }, { status: 500 });
    });

    await step("docs/kubernetes.md: the HTTPRoute example end to end", async () => {
      const block = yamlBlocks(
        await Deno.readTextFile(new URL("../docs/kubernetes.md", import.meta.url)),
      )
        .find((b) => b.kind === "kubernetes" && b.text.includes("kind: HTTPRoute"));
      assert.ok(block, "docs/kubernetes.md has the example");
      c.api.put("namespaces", { metadata: { name: "shop" } });
      c.serviceOn("shop", "api", V1);
      c.serviceOn("shop", "api-next", V2);
      c.serviceOn("shop", "web", V3);
      c.apply(block.text);
      await accepted(c, "shop/web", "shop/store");
      const host = "www.shop.example";
      await c.expect({ host, path: "/api/items" }, { status: 200 });
      const seen = new Map<string, number>();
      for (let i = 0; i < 10; i++) {
        const a = await c.send({ host, path: "/api/items" });
        assert.equal(a.echo!.headers["x-env"], "prod");
        seen.set(a.echo!.backend, (seen.get(a.echo!.backend) ?? 0) + 1);
      }
      assert.deepEqual(Object.fromEntries(seen), { [V1]: 9, [V2]: 1 });
      const old = await c.send({ host, path: "/old" });
      assert.equal(old.status, 301);
      assert.equal(old.headers.get("location"), "http://www.shop.example/new");
      await c.expect({ host, path: "/other" }, { backend: V3 });
      await c.expect({ host: "other.shop.example", path: "/api/items" }, { status: 404 });
    });
  },
});
