import assert from "node:assert/strict";
import { normalizePath } from "./path.ts";

Deno.test("normalizePath leaves clean paths alone", () => {
  for (const p of ["/", "/api", "/api/x", "/api/x/", "/a.b/c.d"]) assert.equal(normalizePath(p), p);
});

Deno.test("normalizePath resolves dot segments and double slashes", () => {
  const cases: [string, string][] = [
    ["//api", "/api"],
    ["/api//x", "/api/x"],
    ["/a/./b", "/a/b"],
    ["/a/../b", "/b"],
    ["/a/b/..", "/a/"],
    ["/../../etc/passwd", "/etc/passwd"],
    ["/..", "/"],
    ["/a/%2e%2e/b", "/b"],
    ["/a/%2E./b", "/b"],
    ["/a/.%2e/../x", "/x"],
    ["/api/../admin", "/admin"],
    ["/x/%2e/y", "/x/y"],
  ];
  for (const [input, want] of cases) assert.equal(normalizePath(input), want, input);
});

Deno.test("normalizePath decodes percent-encoded unreserved characters, not %2F", () => {
  const cases: [string, string][] = [
    ["/%61dmin/x", "/admin/x"],
    ["/%41PI", "/API"],
    ["/%7Euser/%2e%2e/admin", "/admin"],
    ["/admin%2Fx", "/admin%2Fx"],
    ["/public/..%2fadmin", "/public/..%2fadmin"],
    ["/a%20b", "/a%20b"],
    ["/%2561dmin", "/%2561dmin"],
  ];
  for (const [input, want] of cases) assert.equal(normalizePath(input), want, input);
});
