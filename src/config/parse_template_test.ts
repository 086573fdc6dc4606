import assert from "node:assert/strict";
import { parseTemplate } from "./parse_template.ts";

Deno.test("parseTemplate splits literals and variables", () => {
  assert.deepEqual(parseTemplate("https://$host$path$query"), [
    "https://",
    { variable: "host" },
    { variable: "path" },
    { variable: "query" },
  ]);
  assert.deepEqual(parseTemplate("$scheme-$$5"), [{ variable: "scheme" }, "-$5"]);
  assert.deepEqual(parseTemplate(""), [""]);
});

Deno.test("parseTemplate refuses unknown variables and absent groups", () => {
  assert.match(parseTemplate("/x/$uri") as string, /unknown variable "\$uri"/);
  assert.match(parseTemplate("/x/$") as string, /unknown variable/);
  assert.deepEqual(parseTemplate("/users/$1", 1), ["/users/", { group: 1 }]);
  assert.equal(parseTemplate("/users/$2", 1), "$2 names no group; the pattern has 1 capture group");
  assert.match(parseTemplate("/users/$host", 1) as string, /unknown reference/);
});
