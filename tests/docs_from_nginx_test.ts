/**
 * docs/from-nginx.md: at least 40 nginx directives, each mapped to scalwsd keys that exist
 * (checked against the zod schemas through `tools/config_keys.ts`) or to "none".
 */
import assert from "node:assert/strict";
import { configKeys, controllerKeys } from "../tools/config_keys.ts";

/** Sections the schema walk does not list: policies whose value is a list or checked by hand. */
const EXTRA = new Set([
  "policies.allow",
  "policies.deny",
  "policies.error_pages",
  "policies.error_pages.intercept",
]);

const PATH =
  /^(server|upstreams|tenants|applications|routes|cache|runtime|policies|controller)\b[\w.[\]]*$/;

Deno.test("docs/from-nginx.md maps at least 40 nginx directives to keys that exist", async () => {
  const text = await Deno.readTextFile(new URL("../docs/from-nginx.md", import.meta.url));
  const keys = new Map([...configKeys(), ...controllerKeys()]);
  const exists = (path: string) => {
    if (keys.has(path) || EXTRA.has(path)) return true;
    const dot = path.lastIndexOf(".");
    return dot > 0 && (keys.get(path.slice(0, dot))?.includes(path.slice(dot + 1)) ?? false);
  };
  const problems: string[] = [];
  let rows = 0;
  for (const [i, line] of text.split("\n").entries()) {
    const cells = line.split(" | ");
    if (!line.startsWith("| ") || cells.length < 3 || /^\| (nginx|-+) /.test(line)) continue;
    rows++;
    const paths = [...cells[1].matchAll(/`([^`]+)`/g)].map((m) => m[1]).filter((s) => PATH.test(s));
    if (paths.length === 0 && cells[1].trim() !== "none") {
      problems.push(`line ${i + 1}: no scalwsd key (or "none") in "${cells[1].trim()}"`);
    }
    for (const p of paths) if (!exists(p)) problems.push(`line ${i + 1}: no key \`${p}\``);
  }
  if (problems.length > 0) assert.fail(`docs/from-nginx.md:\n  ${problems.join("\n  ")}`);
  assert.ok(rows >= 40, `only ${rows} directives`);
});
