import assert from "node:assert/strict";
import { ListedRoutes } from "./listed_routes.ts";
import { testExchange } from "../../tests/_support/test_exchange.ts";

Deno.test("ListedRoutes: the first listed route whose path, method, headers and query match", () => {
  const t = new ListedRoutes<string>(
    [
      { path: "/a", exact: true, methods: ["POST"], value: "a-post" },
      { path: "/a", exact: false, headers: { "x-v": "2" }, value: "a-v2" },
      { path: "/a", exact: false, query: { k: "1" }, value: "a-k" },
      { path: "/", exact: false, methods: ["GET"], value: "root-get" },
      // Same as the one above: never reached, not an error.
      { path: "/", exact: false, methods: ["GET"], value: "never" },
    ],
    "fallback",
  );
  const m = (target: string, method = "GET", headers: Record<string, string> = {}) => {
    const ex = testExchange(target, { method, headers });
    return t.match(ex.path, ex);
  };
  assert.equal(m("/a", "POST"), "a-post");
  assert.equal(m("/a/x", "POST", { "x-v": "2" }), "a-v2");
  assert.equal(m("/a", "POST", { "x-v": "2" }), "a-post");
  assert.equal(m("/a/b?k=1", "PUT"), "a-k");
  assert.equal(m("/ab"), "root-get");
  // A method no route takes falls through to the fallback: no 405.
  assert.equal(m("/ab", "DELETE"), "fallback");
  assert.equal(m("/a/b?k=2", "PUT"), "fallback");
});

Deno.test("ListedRoutes: scheme https only over TLS, http only plain", () => {
  const t = new ListedRoutes<string>(
    [
      { path: "/", exact: false, scheme: "https", value: "tls" },
      { path: "/", exact: false, scheme: "http", value: "plain" },
    ],
    "fallback",
  );
  const ex = testExchange("/x");
  assert.equal(ex.secure, false);
  assert.equal(t.match(ex.path, ex), "plain");
});
