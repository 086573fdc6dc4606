import assert from "node:assert/strict";
import type { RouteConfig } from "../config/mod.ts";
import { ROUTE_FIELD, RouteFields, routesShareUrls, routeTag } from "./cache_route.ts";

const route = (over: Partial<RouteConfig> = {}): RouteConfig => ({
  path: "/c",
  exact: false,
  runtime: { type: "respond", status: 200, body: "", headers: {} } as RouteConfig["runtime"],
  policies: [],
  inherit: true,
  ...over,
});

Deno.test("RouteFields: the route field is the tag, whatever the client sent; others as sent", () => {
  const h = new Headers({ [ROUTE_FIELD]: "spoofed", accept: "text/html" });
  const f = new RouteFields(h, "mine");
  assert.equal(f.get(ROUTE_FIELD), "mine");
  assert.equal(f.get("accept"), "text/html");
  assert.equal(f.get("x-none"), null);
});

Deno.test("routes share URLs when headers or the query tell them apart; tags are stable and distinct", () => {
  assert.equal(routesShareUrls({ routes: [route(), route({ path: "/d", exact: true })] }), false);
  assert.equal(routesShareUrls({ routes: [route({ headers: { "x-v": "2" } })] }), true);
  assert.equal(routesShareUrls({ routes: [route({ query: { beta: "1" } })] }), true);
  const a = route({ headers: { "x-v": "2" } });
  assert.equal(routeTag(a), routeTag(route({ headers: { "x-v": "2" } })));
  const tags = new Set([
    routeTag(a),
    routeTag(route()),
    routeTag(null),
    routeTag(route({ query: { b: "1" } })),
  ]);
  assert.equal(tags.size, 4);
});
