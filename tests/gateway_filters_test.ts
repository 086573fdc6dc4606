/**
 * `scalwsd gateway` against the Gateway API conformance suite's HTTPRoute filter cases
 * (RequestHeaderModifier, ResponseHeaderModifier, RequestRedirect, URLRewrite): the suite's
 * manifests on a fake API server, its requests through scalwsd to real echo members, and what
 * the suite asserts about the request the member got, the answer's headers and `Location`.
 */
import assert from "node:assert/strict";
import {
  accepted,
  type Answer,
  INFRA,
  startConformance,
  stepper,
} from "./_support/gateway_harness.ts";

const SAME = `${INFRA}/same-namespace`;
const V1 = "infra-backend-v1";
const V2 = "infra-backend-v2";

/** An HTTPRoute on `same-namespace` with one rule per `[prefix, filters, backend?]`. */
function route(name: string, rules: [string | null, string, string?][], hostnames?: string[]) {
  return `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  ${hostnames ? `hostnames: ${JSON.stringify(hostnames)}` : ""}
  rules:
${
    rules.map(([prefix, filters, backend]) =>
      `  - ${
        prefix === null ? "" : `matches: [{path: {type: PathPrefix, value: ${prefix}}}]\n    `
      }` +
      `filters: ${filters}` +
      (backend ? `\n    backendRefs: [{name: ${backend}, port: 8080}]` : "")
    ).join("\n")
  }
`;
}

/** The headers the echo member got, for the names given (absent: undefined). */
function seen(a: Answer, names: string[]): Record<string, string | undefined> {
  return Object.fromEntries(names.map((n) => [n, a.echo?.headers[n.toLowerCase()]]));
}

/** The answer's headers for the names given. */
function answered(a: Answer, names: string[]): Record<string, string | null> {
  return Object.fromEntries(names.map((n) => [n, a.headers.get(n)]));
}

/** `X-Echo-Set-Header` asking the echo member to answer with these headers. */
function backendSets(h: Record<string, string>): Record<string, string> {
  return { "X-Echo-Set-Header": Object.entries(h).map(([k, v]) => `${k}:${v}`).join(",") };
}

Deno.test({
  name: "scalwsd gateway passes the conformance suite's HTTPRoute filter cases",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    await using c = await startConformance();
    const step = stepper(t, c);

    await step("HTTPRouteRequestHeaderModifier", async () => {
      const mod = (m: string) => `[{type: RequestHeaderModifier, requestHeaderModifier: ${m}}]`;
      c.apply(route("request-header-modifier", [
        ["/set", mod("{set: [{name: X-Header-Set, value: set-overwrites-values}]}"), V1],
        ["/add", mod("{add: [{name: X-Header-Add, value: add-appends-values}]}"), V1],
        ["/remove", mod("{remove: [X-Header-Remove]}"), V1],
        [
          "/multiple",
          mod(
            "{set: [{name: X-Header-Set-1, value: header-set-1}, {name: X-Header-Set-2, value: header-set-2}], " +
              "add: [{name: X-Header-Add-1, value: header-add-1}, {name: X-Header-Add-2, value: header-add-2}, {name: X-Header-Add-3, value: header-add-3}], " +
              "remove: [X-Header-Remove-1, X-Header-Remove-2]}",
          ),
          V1,
        ],
        [
          "/case-insensitivity",
          mod(
            "{set: [{name: X-Header-Set, value: header-set}], add: [{name: X-Header-Add, value: header-add}], remove: [X-Header-Remove]}",
          ),
          V1,
        ],
      ]));
      await accepted(c, SAME, `${INFRA}/request-header-modifier`);
      let a = await c.expect({ path: "/set", headers: { "Some-Other-Header": "val" } }, {
        backend: V1,
      });
      assert.deepEqual(seen(a, ["Some-Other-Header", "X-Header-Set"]), {
        "Some-Other-Header": "val",
        "X-Header-Set": "set-overwrites-values",
      });
      a = await c.send({ path: "/set", headers: { "X-Header-Set": "some-other-value" } });
      assert.equal(seen(a, ["X-Header-Set"])["X-Header-Set"], "set-overwrites-values");
      a = await c.send({ path: "/add", headers: { "Some-Other-Header": "val" } });
      assert.equal(a.echo!.headers["x-header-add"], "add-appends-values");
      a = await c.send({ path: "/add", headers: { "X-Header-Add": "some-other-value" } });
      assert.equal(a.echo!.headers["x-header-add"], "some-other-value, add-appends-values");
      a = await c.send({ path: "/remove", headers: { "X-Header-Remove": "val" } });
      assert.equal(a.echo!.headers["x-header-remove"], undefined);
      assert.equal(a.echo!.path, "/remove");
      a = await c.send({
        path: "/multiple",
        headers: {
          "X-Header-Set-2": "set-val-2",
          "X-Header-Add-2": "add-val-2",
          "X-Header-Remove-2": "remove-val-2",
          "Another-Header": "another-header-val",
        },
      });
      assert.deepEqual(
        seen(a, [
          "X-Header-Set-1",
          "X-Header-Set-2",
          "X-Header-Add-1",
          "X-Header-Add-2",
          "X-Header-Add-3",
          "Another-Header",
          "X-Header-Remove-1",
          "X-Header-Remove-2",
        ]),
        {
          "X-Header-Set-1": "header-set-1",
          "X-Header-Set-2": "header-set-2",
          "X-Header-Add-1": "header-add-1",
          "X-Header-Add-2": "add-val-2, header-add-2",
          "X-Header-Add-3": "header-add-3",
          "Another-Header": "another-header-val",
          "X-Header-Remove-1": undefined,
          "X-Header-Remove-2": undefined,
        },
      );
      a = await c.send({
        path: "/case-insensitivity",
        headers: {
          "x-header-set": "original-val-set",
          "x-header-add": "original-val-add",
          "x-header-remove": "original-val-remove",
          "Another-Header": "another-header-val",
        },
      });
      assert.deepEqual(
        seen(a, ["X-Header-Set", "X-Header-Add", "Another-Header", "X-Header-Remove"]),
        {
          "X-Header-Set": "header-set",
          "X-Header-Add": "original-val-add, header-add",
          "Another-Header": "another-header-val",
          "X-Header-Remove": undefined,
        },
      );
    });

    await step("HTTPRouteResponseHeaderModifier", async () => {
      const mod = (m: string) => `[{type: ResponseHeaderModifier, responseHeaderModifier: ${m}}]`;
      c.apply(route("response-header-modifier", [
        ["/set", mod("{set: [{name: X-Header-Set, value: set-overwrites-values}]}"), V1],
        ["/add", mod("{add: [{name: X-Header-Add, value: add-appends-values}]}"), V1],
        ["/remove", mod("{remove: [X-Header-Remove]}"), V1],
        [
          "/multiple",
          mod(
            "{set: [{name: X-Header-Set-1, value: header-set-1}, {name: X-Header-Set-2, value: header-set-2}], " +
              "add: [{name: X-Header-Add-1, value: header-add-1}, {name: X-Header-Add-2, value: header-add-2}, {name: X-Header-Add-3, value: header-add-3}], " +
              "remove: [X-Header-Remove-1, X-Header-Remove-2]}",
          ),
          V1,
        ],
        [
          "/case-insensitivity",
          mod(
            "{set: [{name: X-Header-Set, value: header-set}], add: [{name: X-Header-Add, value: header-add}, " +
              "{name: x-lowercase-add, value: lowercase-add}, {name: x-Mixedcase-ADD-1, value: mixedcase-add-1}, " +
              "{name: X-mixeDcase-add-2, value: mixedcase-add-2}, {name: X-UPPERCASE-ADD, value: uppercase-add}], remove: [X-Header-Remove]}",
          ),
          V1,
        ],
        [
          "/response-and-request-header-modifiers",
          "[{type: ResponseHeaderModifier, responseHeaderModifier: {set: [{name: X-Header-Set-1, value: header-set-1}, " +
          "{name: X-Header-Set-2, value: header-set-2}], add: [{name: X-Header-Add-1, value: header-add-1}, " +
          "{name: X-Header-Add-2, value: header-add-2}], remove: [X-Header-Remove-1, X-Header-Remove-2]}}, " +
          "{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: X-Header-Set, value: set-overwrites-values}], " +
          "add: [{name: X-Header-Add, value: header-val-1}, {name: X-Header-Add-Append, value: header-val-2}], remove: [X-Header-Remove]}}]",
          V1,
        ],
      ]));
      await accepted(c, SAME, `${INFRA}/response-header-modifier`);
      let a = await c.expect(
        { path: "/set", headers: backendSets({ "Some-Other-Header": "val" }) },
        { backend: V1 },
      );
      assert.deepEqual(answered(a, ["Some-Other-Header", "X-Header-Set"]), {
        "Some-Other-Header": "val",
        "X-Header-Set": "set-overwrites-values",
      });
      a = await c.send({
        path: "/set",
        headers: backendSets({ "Some-Other-Header": "val", "X-Header-Set": "some-other-value" }),
      });
      assert.equal(a.headers.get("X-Header-Set"), "set-overwrites-values");
      a = await c.send({ path: "/add", headers: backendSets({ "Some-Other-Header": "val" }) });
      assert.equal(a.headers.get("X-Header-Add"), "add-appends-values");
      a = await c.send({
        path: "/add",
        headers: backendSets({ "X-Header-Add": "some-other-value" }),
      });
      assert.equal(a.headers.get("X-Header-Add"), "some-other-value, add-appends-values");
      a = await c.send({ path: "/remove", headers: backendSets({ "X-Header-Remove": "val" }) });
      assert.equal(a.headers.get("X-Header-Remove"), null);
      a = await c.send({
        path: "/multiple",
        headers: backendSets({
          "X-Header-Set-2": "set-val-2",
          "X-Header-Add-2": "add-val-2",
          "X-Header-Remove-2": "remove-val-2",
          "Another-Header": "another-header-val",
          "X-Header-Remove-1": "val",
        }),
      });
      assert.deepEqual(
        answered(a, [
          "X-Header-Set-1",
          "X-Header-Set-2",
          "X-Header-Add-1",
          "X-Header-Add-2",
          "X-Header-Add-3",
          "Another-Header",
          "X-Header-Remove-1",
          "X-Header-Remove-2",
        ]),
        {
          "X-Header-Set-1": "header-set-1",
          "X-Header-Set-2": "header-set-2",
          "X-Header-Add-1": "header-add-1",
          "X-Header-Add-2": "add-val-2, header-add-2",
          "X-Header-Add-3": "header-add-3",
          "Another-Header": "another-header-val",
          "X-Header-Remove-1": null,
          "X-Header-Remove-2": null,
        },
      );
      a = await c.send({
        path: "/case-insensitivity",
        headers: backendSets({
          "x-header-set": "original-val-set",
          "x-header-add": "original-val-add",
          "x-header-remove": "original-val-remove",
          "Another-Header": "another-header-val",
        }),
      });
      assert.deepEqual(
        answered(a, [
          "X-Header-Set",
          "X-Header-Add",
          "X-Lowercase-Add",
          "X-Mixedcase-Add-1",
          "X-Mixedcase-Add-2",
          "X-Uppercase-Add",
          "Another-Header",
          "X-Header-Remove",
        ]),
        {
          "X-Header-Set": "header-set",
          "X-Header-Add": "original-val-add, header-add",
          "X-Lowercase-Add": "lowercase-add",
          "X-Mixedcase-Add-1": "mixedcase-add-1",
          "X-Mixedcase-Add-2": "mixedcase-add-2",
          "X-Uppercase-Add": "uppercase-add",
          "Another-Header": "another-header-val",
          "X-Header-Remove": null,
        },
      );
      a = await c.send({
        path: "/response-and-request-header-modifiers",
        headers: {
          "X-Header-Remove": "remove-val",
          "X-Header-Add-Append": "append-val-1",
          "X-Header-Echo": "echo",
          ...backendSets({
            "X-Header-Set-2": "set-val-2",
            "X-Header-Add-2": "add-val-2",
            "X-Header-Remove-2": "remove-val-2",
            "Another-Header": "another-header-val",
            "X-Header-Remove-1": "remove-val-1",
            "X-Header-Echo": "echo",
          }),
        },
      });
      assert.deepEqual(
        seen(a, [
          "X-Header-Add",
          "X-Header-Set",
          "X-Header-Add-Append",
          "X-Header-Echo",
          "X-Header-Remove",
        ]),
        {
          "X-Header-Add": "header-val-1",
          "X-Header-Set": "set-overwrites-values",
          "X-Header-Add-Append": "append-val-1, header-val-2",
          "X-Header-Echo": "echo",
          "X-Header-Remove": undefined,
        },
      );
      assert.deepEqual(
        answered(a, [
          "X-Header-Set-1",
          "X-Header-Set-2",
          "X-Header-Add-1",
          "X-Header-Add-2",
          "Another-Header",
          "X-Header-Echo",
          "X-Header-Remove-1",
          "X-Header-Remove-2",
        ]),
        {
          "X-Header-Set-1": "header-set-1",
          "X-Header-Set-2": "header-set-2",
          "X-Header-Add-1": "header-add-1",
          "X-Header-Add-2": "add-val-2, header-add-2",
          "Another-Header": "another-header-val",
          "X-Header-Echo": "echo",
          "X-Header-Remove-1": null,
          "X-Header-Remove-2": null,
        },
      );
    });

    /** Sends each request and checks status and `Location` (scheme, host, port, path). */
    const redirects = async (
      name: string,
      cases: [string, number, { scheme?: string; host?: string; port?: string; path?: string }][],
    ) => {
      await accepted(c, SAME, `${INFRA}/${name}`);
      for (const [path, status, want] of cases) {
        const a = await c.expect({ host: "redirect.test", path }, { status });
        const loc = new URL(a.headers.get("location")!);
        assert.equal(loc.protocol, `${want.scheme ?? "http"}:`, path);
        assert.equal(loc.hostname, want.host ?? "redirect.test", path);
        assert.equal(loc.port, want.port ?? "", path);
        assert.equal(loc.pathname, want.path ?? path, path);
        assert.equal(a.echo, undefined, "a redirect never reaches the member");
      }
    };
    const redirect = (r: string) => `[{type: RequestRedirect, requestRedirect: ${r}}]`;

    await step("HTTPRouteRedirectHostAndStatus", async () => {
      c.apply(route("redirect-host-and-status", [
        ["/hostname-redirect", redirect("{hostname: example.org}")],
        ["/host-and-status", redirect("{statusCode: 301, hostname: example.org}")],
      ]));
      await redirects("redirect-host-and-status", [
        ["/hostname-redirect", 302, { host: "example.org" }],
        ["/host-and-status", 301, { host: "example.org" }],
      ]);
    });

    await step("HTTPRouteRedirectPath", async () => {
      const prefix = "{type: ReplacePrefixMatch, replacePrefixMatch: /replacement-prefix}";
      c.apply(route("redirect-path", [
        ["/original-prefix", redirect(`{path: ${prefix}}`)],
        [
          "/full",
          redirect("{path: {type: ReplaceFullPath, replaceFullPath: /full-path-replacement}}"),
        ],
        ["/path-and-host", redirect(`{hostname: example.org, path: ${prefix}}`)],
        ["/path-and-status", redirect(`{path: ${prefix}, statusCode: 301}`)],
        [
          "/full-path-and-host",
          redirect(
            "{hostname: example.org, path: {type: ReplaceFullPath, replaceFullPath: /replacement-full}}",
          ),
        ],
        [
          "/full-path-and-status",
          redirect(
            "{path: {type: ReplaceFullPath, replaceFullPath: /replacement-full}, statusCode: 301}",
          ),
        ],
      ]));
      await redirects("redirect-path", [
        ["/original-prefix/lemon", 302, { path: "/replacement-prefix/lemon" }],
        ["/full/path/original", 302, { path: "/full-path-replacement" }],
        ["/path-and-host", 302, { host: "example.org", path: "/replacement-prefix" }],
        ["/path-and-status", 301, { path: "/replacement-prefix" }],
        ["/full-path-and-host", 302, { host: "example.org", path: "/replacement-full" }],
        ["/full-path-and-status", 301, { path: "/replacement-full" }],
      ]);
    });

    await step("HTTPRouteRedirectPort", async () => {
      c.apply(route("redirect-port", [
        ["/port", redirect("{port: 8083}")],
        ["/port-and-host", redirect("{hostname: example.org, port: 8083}")],
        ["/port-and-status", redirect("{port: 8083, statusCode: 301}")],
        [
          "/port-and-host-and-status",
          redirect("{port: 8083, hostname: example.org, statusCode: 302}"),
        ],
      ]));
      await redirects("redirect-port", [
        ["/port", 302, { port: "8083" }],
        ["/port-and-host", 302, { host: "example.org", port: "8083" }],
        ["/port-and-status", 301, { port: "8083" }],
        ["/port-and-host-and-status", 302, { host: "example.org", port: "8083" }],
      ]);
    });

    await step("HTTPRouteRedirectScheme", async () => {
      c.apply(route("redirect-scheme", [
        ["/scheme", redirect('{scheme: "https"}')],
        ["/scheme-and-host", redirect('{hostname: example.org, scheme: "https"}')],
        ["/scheme-and-status", redirect('{scheme: "https", statusCode: 301}')],
        [
          "/scheme-and-host-and-status",
          redirect('{scheme: "https", statusCode: 302, hostname: example.org}'),
        ],
      ]));
      await redirects("redirect-scheme", [
        ["/scheme", 302, { scheme: "https" }],
        ["/scheme-and-host", 302, { host: "example.org", scheme: "https" }],
        ["/scheme-and-status", 301, { scheme: "https" }],
        ["/scheme-and-host-and-status", 302, { scheme: "https", host: "example.org" }],
      ]);
    });

    const modifyHeaders = "{type: RequestHeaderModifier, requestHeaderModifier: " +
      "{set: [{name: X-Header-Set, value: set-overwrites-values}], add: [{name: X-Header-Add, value: header-val-1}, " +
      "{name: X-Header-Add-Append, value: header-val-2}], remove: [X-Header-Remove]}}";
    const modified = (a: Answer) =>
      assert.deepEqual(
        seen(a, ["X-Header-Add", "X-Header-Add-Append", "X-Header-Set", "X-Header-Remove"]),
        {
          "X-Header-Add": "header-val-1",
          "X-Header-Add-Append": "append-val-1, header-val-2",
          "X-Header-Set": "set-overwrites-values",
          "X-Header-Remove": undefined,
        },
      );
    const toModify = {
      "X-Header-Remove": "remove-val",
      "X-Header-Add-Append": "append-val-1",
      "X-Header-Set": "set-val",
    };

    await step("HTTPRouteRewriteHost", async () => {
      c.apply(route("rewrite-host", [
        ["/one", "[{type: URLRewrite, urlRewrite: {hostname: one.example.org}}]", V1],
        [null, "[{type: URLRewrite, urlRewrite: {hostname: example.org}}]", V2],
        [
          "/rewrite-host-and-modify-headers",
          `[{type: URLRewrite, urlRewrite: {hostname: test.example.org}}, ${modifyHeaders}]`,
          V2,
        ],
      ], ["rewrite.example"]));
      await accepted(c, SAME, `${INFRA}/rewrite-host`);
      let a = await c.expect({ host: "rewrite.example", path: "/one" }, { backend: V1 });
      assert.equal(a.echo!.host, "one.example.org");
      assert.equal(a.echo!.path, "/one");
      a = await c.expect({ host: "rewrite.example", path: "/two" }, { backend: V2 });
      assert.equal(a.echo!.host, "example.org");
      assert.equal(a.echo!.path, "/two");
      a = await c.expect(
        { host: "rewrite.example", path: "/rewrite-host-and-modify-headers", headers: toModify },
        { backend: V2 },
      );
      assert.equal(a.echo!.host, "test.example.org");
      modified(a);
    });

    await step("HTTPRouteRewritePath", async () => {
      const rewrite = (p: string) => `{type: URLRewrite, urlRewrite: {path: ${p}}}`;
      c.apply(route("rewrite-path", [
        ["/prefix/one", `[${rewrite("{type: ReplacePrefixMatch, replacePrefixMatch: /one}")}]`, V1],
        ["/strip-prefix", `[${rewrite("{type: ReplacePrefixMatch, replacePrefixMatch: /}")}]`, V1],
        ["/full/one", `[${rewrite("{type: ReplaceFullPath, replaceFullPath: /one}")}]`, V1],
        [
          "/full/rewrite-path-and-modify-headers",
          `[${rewrite("{type: ReplaceFullPath, replaceFullPath: /test}")}, ${modifyHeaders}]`,
          V1,
        ],
        [
          "/prefix/rewrite-path-and-modify-headers",
          `[${
            rewrite("{type: ReplacePrefixMatch, replacePrefixMatch: /prefix}")
          }, ${modifyHeaders}]`,
          V1,
        ],
      ]));
      await accepted(c, SAME, `${INFRA}/rewrite-path`);
      const cases: [string, string][] = [
        ["/prefix/one/two", "/one/two"],
        ["/strip-prefix/three", "/three"],
        ["/strip-prefix", "/"],
        ["/full/one/two", "/one"],
      ];
      for (const [path, got] of cases) {
        const a = await c.expect({ path }, { backend: V1 });
        assert.equal(a.echo!.path, got, path);
      }
      let a = await c.expect(
        { path: "/full/rewrite-path-and-modify-headers/test", headers: toModify },
        { backend: V1 },
      );
      assert.equal(a.echo!.path, "/test");
      modified(a);
      a = await c.expect(
        { path: "/prefix/rewrite-path-and-modify-headers/one", headers: toModify },
        { backend: V1 },
      );
      assert.equal(a.echo!.path, "/prefix/one");
      modified(a);
    });
  },
});
