import assert from "node:assert/strict";
import { conditionCount, parseQuery, RouteTable } from "./route_table.ts";
import { testExchange } from "../../tests/_support/test_exchange.ts";

Deno.test("RouteTable: exact first, then longest prefix, then most conditions; 405 per path", () => {
  const t = new RouteTable<string>(
    [
      { path: "/a", exact: false, value: "prefix" },
      { path: "/a", exact: true, value: "exact" },
      { path: "/a/b", exact: false, methods: ["GET"], value: "b-get" },
      { path: "/a/b", exact: false, methods: ["GET"], headers: { "x-v": "2" }, value: "b-v2" },
      { path: "/q", exact: false, query: { k: "a b" }, value: "q" },
    ],
    "fallback",
    (allow) => `405 ${allow.join(",")}`,
  );
  const m = (target: string, method = "GET", headers: Record<string, string> = {}) => {
    const ex = testExchange(target, { method, headers });
    return t.match(ex.path, ex);
  };
  assert.equal(m("/a"), "exact");
  assert.equal(m("/a/x"), "prefix");
  assert.equal(m("/a/b/c"), "b-get");
  assert.equal(m("/a/b", "GET", { "x-v": "2" }), "b-v2");
  assert.equal(m("/a/b", "POST"), "405 GET");
  assert.equal(m("/q?k=a+b"), "q");
  assert.equal(m("/q?k=a%20b&k=z"), "q");
  assert.equal(m("/q?k=z"), "fallback");
  assert.equal(m("/z"), "fallback");
});

Deno.test("parseQuery and conditionCount", () => {
  assert.deepEqual([...parseQuery("?a=1&b&a=2&c=%zz")], [["a", "1"], ["b", ""], ["c", "%zz"]]);
  assert.equal(conditionCount({ path: "/", exact: false, methods: ["GET"], query: { a: "1" } }), 2);
});
