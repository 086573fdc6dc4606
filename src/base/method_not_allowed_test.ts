import assert from "node:assert/strict";
import { allowedMethods, methodNotAllowed } from "./method_not_allowed.ts";

Deno.test("allowedMethods matches parameters, constrained ones too; methodNotAllowed names them", () => {
  const routes = [
    { method: "GET", path: "/v1/upstreams/:name" },
    { method: "PUT", path: "/v1/upstreams/:name" },
    { method: "POST", path: "/v1/autoscaling/:what{enable|disable}" },
    { method: "ALL", path: "*" },
  ];
  assert.deepEqual(allowedMethods(routes, "/v1/upstreams/api"), ["GET", "PUT"]);
  assert.deepEqual(allowedMethods(routes, "/v1/autoscaling/enable"), ["POST"]);
  assert.deepEqual(allowedMethods(routes, "/v1/nothing"), []);
  assert.equal(
    methodNotAllowed("DELETE", "/v1/upstreams/api", ["GET", "PUT"]),
    "DELETE is not allowed on /v1/upstreams/api; use GET or PUT",
  );
});
