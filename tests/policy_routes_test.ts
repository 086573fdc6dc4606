import assert from "node:assert/strict";
import { request, startScalwsd } from "./_support/mod.ts";
import { configErrors, HOST, oneApp } from "./_support/policies.ts";

const respond = (body: string) => `{type: respond, body: ${body}}`;

Deno.test("route matching: exact, methods (405 with Allow), headers and query, most specific first", async () => {
  await using s = await startScalwsd(oneApp(
    respond("app"),
    `        routes:
          - {path: /api, runtime: ${respond("prefix")}}
          - {path: /api, exact: true, runtime: ${respond("exact")}}
          - {path: /api/v, headers: {X-Version: "2"}, runtime: ${respond("v2")}}
          - {path: /api/v, query: {beta: "1"}, headers: {X-Version: "2"}, runtime: ${
      respond("v2beta")
    }}
          - {path: /api/v, runtime: ${respond("v")}}
          - {path: /form, methods: [GET, HEAD], runtime: ${respond("get")}}
          - {path: /form, methods: [POST], runtime: ${respond("post")}}
          - {path: /only, methods: [PUT], headers: {X-Key: k}, runtime: ${respond("put")}}`,
  ));
  const body = async (
    path: string,
    init: { method?: string; headers?: Record<string, string> } = {},
  ) => {
    const r = await request(`${s.url}${path}`, {
      method: init.method,
      headers: { ...HOST, ...init.headers },
    });
    return `${r.status} ${r.text}${
      r.headers.get("allow") ? ` allow=${r.headers.get("allow")}` : ""
    }`;
  };
  assert.equal(await body("/api"), "200 exact");
  assert.equal(await body("/api/x"), "200 prefix");
  assert.equal(await body("/api/v"), "200 v");
  assert.equal(await body("/api/v/1", { headers: { "x-version": "2" } }), "200 v2");
  assert.equal(await body("/api/v?beta=1", { headers: { "x-version": "2" } }), "200 v2beta");
  assert.equal(await body("/api/v?beta=2", { headers: { "x-version": "2" } }), "200 v2");
  assert.equal(await body("/api/v", { headers: { "x-version": "3" } }), "200 v");
  assert.equal(await body("/form"), "200 get");
  assert.equal(await body("/form", { method: "POST" }), "200 post");
  assert.equal(
    await body("/form", { method: "DELETE" }),
    "405 Method Not Allowed\n allow=GET, HEAD, POST",
  );
  // The header condition does not match: the path falls through to the application.
  assert.equal(await body("/only", { method: "GET" }), "200 app");
  assert.equal(
    await body("/only", { method: "GET", headers: { "x-key": "k" } }),
    "405 Method Not Allowed\n allow=PUT",
  );
  assert.equal(await body("/only", { method: "PUT", headers: { "x-key": "k" } }), "200 put");
  assert.equal(await body("/elsewhere"), "200 app");
});

Deno.test("route matching: routes that can never be told apart are configuration errors", () => {
  const yaml = oneApp(
    respond("app"),
    `        routes:
          - {path: /a, runtime: ${respond(`"1"`)}}
          - {path: /a/, runtime: ${respond(`"2"`)}}
          - {path: /b, methods: [GET, POST], runtime: ${respond(`"3"`)}}
          - {path: /b, methods: [POST, PUT], runtime: ${respond(`"4"`)}}
          - {path: /c, headers: {X-A: "1"}, runtime: ${respond(`"5"`)}}
          - {path: /c, headers: {x-a: "1"}, runtime: ${respond(`"6"`)}}
          - {path: /d, methods: [get], runtime: ${respond(`"7"`)}}
          - {path: /e, exact: true, runtime: ${respond(`"8"`)}}
          - {path: /e, runtime: ${respond(`"9"`)}}`,
  );
  const errors = configErrors(yaml);
  const R = "tenants[0].applications[0].routes";
  assert.deepEqual(errors, [
    `${R}[1].path: duplicate route "/a"`,
    `${R}[3]: cannot be told apart from ${R}[2] (same path, exact, headers and query; both take POST)`,
    `${R}[5]: cannot be told apart from ${R}[4] (same path, exact, headers and query; one takes every method)`,
    `${R}[6].methods[0]: invalid method "get": methods are upper case (GET)`,
  ]);
});
