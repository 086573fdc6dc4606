import assert from "node:assert/strict";
import { provisionTenants, routeClash } from "./provision_applications.ts";
import type { Draft } from "./provision_draft.ts";
import type { RouteConfig } from "./types.ts";

const route = (o: Partial<RouteConfig>): RouteConfig =>
  ({
    path: "/a",
    exact: false,
    runtime: { type: "respond", status: 200, body: "", headers: {} },
    policies: [],
    inherit: true,
    ...o,
  }) as RouteConfig;

Deno.test("routeClash: routes that can never be told apart", () => {
  assert.equal(routeClash(route({}), route({})), "duplicate");
  assert.equal(routeClash(route({}), route({ path: "/b" })), undefined);
  assert.equal(routeClash(route({}), route({ exact: true })), undefined);
  assert.equal(
    routeClash(route({ methods: ["GET"] }), route({})),
    "same path, exact, headers and query; one takes every method",
  );
  assert.equal(
    routeClash(route({ methods: ["GET", "PUT"] }), route({ methods: ["PUT"] })),
    "same path, exact, headers and query; both take PUT",
  );
  assert.equal(routeClash(route({ methods: ["GET"] }), route({ methods: ["PUT"] })), undefined);
  assert.equal(
    routeClash(route({ headers: { a: "1" } }), route({ headers: { a: "2" } })),
    undefined,
  );
});

function tenants(value: unknown) {
  const draft: Draft = {
    pools: new Map(),
    poolNames: new Set(),
    tenants: [],
    poolRefs: [],
    allApplications: true,
  };
  const ctx = {
    errors: [] as string[],
    warnings: [] as string[],
    dir: ".",
    readFile: () => new Uint8Array(),
  };
  provisionTenants(value, ["tenants"], draft, ctx);
  return { draft, errors: ctx.errors };
}

Deno.test("provisionTenants: a route with only conditions uses the application's runtime; clashes are errors", () => {
  const { draft, errors } = tenants([{
    name: "t",
    applications: [{
      name: "a",
      domains: ["a.example"],
      runtime: { type: "respond", body: "app" },
      cache: {},
      routes: [{ path: "/x", methods: ["GET"] }, { path: "/x", methods: ["GET", "HEAD"] }],
    }],
  }]);
  assert.deepEqual(errors, [
    "tenants[0].applications[0].routes[1]: cannot be told apart from " +
    "tenants[0].applications[0].routes[0] (same path, exact, headers and query; both take GET)",
  ]);
  assert.equal(draft.tenants[0].applications[0].config, undefined);
  const ok = tenants([{
    name: "t",
    applications: [{
      name: "a",
      domains: ["a.example"],
      runtime: { type: "respond", body: "app" },
      cache: {},
      routes: [{ path: "/x", methods: ["GET"] }],
    }],
  }]).draft.tenants[0].applications[0].config!;
  assert.deepEqual(ok.routes[0].runtime, ok.runtime);
  assert.equal(ok.cache?.max_object_size, 8 * 1024 * 1024);
  assert.deepEqual(tenants({}).errors, ["tenants: must be a list"]);
});
