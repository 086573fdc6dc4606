/**
 * docs/admin.md's table names every route the admin API serves (`admin/app.ts`), as
 * `METHOD /path` with `{name}` for a path parameter.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);

Deno.test("docs/admin.md's table names every route of admin/app.ts", async () => {
  const src = await Deno.readTextFile(new URL("admin/app.ts", ROOT));
  const routes = [...src.matchAll(/\bapp\.(get|put|post|delete|patch)\("([^"]+)"/g)]
    .map((m) => `${m[1].toUpperCase()} ${m[2].replace(/:([a-z_]+)/g, "{$1}")}`);
  assert.ok(routes.length >= 10, `only ${routes.length} routes found in admin/app.ts`);
  const doc = await Deno.readTextFile(new URL("docs/admin.md", ROOT));
  const documented = new Set([...doc.matchAll(/^\| `([A-Z]+ [^`]+)`/gm)].map((m) => m[1]));
  // `GET /console` only redirects to `GET /console/`.
  const missing = routes.filter((r) => r !== "GET /console" && !documented.has(r));
  assert.deepEqual(missing, []);
});
