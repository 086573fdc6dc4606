import assert from "node:assert/strict";
import { Router } from "./router.ts";

Deno.test("Router picks the longest segment-aligned prefix", () => {
  const r = new Router([{ path: "/api", value: "api" }, { path: "/api/v2", value: "v2" }], "app");
  assert.equal(r.match("/api"), "api");
  assert.equal(r.match("/api/x"), "api");
  assert.equal(r.match("/apix"), "app");
  assert.equal(r.match("/api/v2"), "v2");
  assert.equal(r.match("/api/v2/users"), "v2");
  assert.equal(r.match("/api/v20"), "api");
  assert.equal(r.match("/"), "app");
});

Deno.test("Router treats a root route as a catch-all", () => {
  const r = new Router([{ path: "/", value: "root" }, { path: "/a", value: "a" }], "app");
  assert.equal(r.match("/a/b"), "a");
  assert.equal(r.match("/b"), "root");
});
