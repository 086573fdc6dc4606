import assert from "node:assert/strict";
import { z } from "zod";
import { formatPath, issueStrings, parseUnit } from "./issues.ts";

Deno.test("formatPath writes keys with dots and indexes in brackets", () => {
  assert.equal(
    formatPath(["upstreams", "api", "members", 1, "weight"]),
    "upstreams.api.members[1].weight",
  );
  assert.equal(formatPath(["tenants", 0, "applications", 2]), "tenants[0].applications[2]");
  assert.equal(formatPath([]), "(root)");
});

const schema = z.object({
  name: z.string(),
  list: z.array(z.string()).optional(),
  flag: z.boolean().optional(),
  sub: z.object({ n: z.number() }).strict().optional(),
  either: z.union([z.object({ pool: z.string() }).strict(), z.string()]).optional(),
}).strict();

Deno.test("parseUnit gives short messages for zod's type and key issues", () => {
  const errors: string[] = [];
  const out = parseUnit(
    schema,
    {
      list: "a",
      flag: "yes",
      sub: { n: "1", m: 2, k: 3 },
      extra: 1,
    },
    ["upstreams", "api"],
    errors,
  );
  assert.equal(out, undefined);
  assert.deepEqual(errors, [
    "upstreams.api.name: is required",
    "upstreams.api.list: must be a list",
    "upstreams.api.flag: must be true or false",
    "upstreams.api.sub.n: must be a number",
    'upstreams.api.sub: unknown key "m"',
    'upstreams.api.sub: unknown key "k"',
    'upstreams.api: unknown key "extra"',
  ]);
});

Deno.test("parseUnit returns the data when it is valid", () => {
  const errors: string[] = [];
  assert.deepEqual(parseUnit(schema, { name: "a" }, [], errors), { name: "a" });
  assert.deepEqual(errors, []);
  assert.deepEqual(parseUnit(schema, [], [], errors), undefined);
  assert.deepEqual(errors, ["(root): must be a mapping"]);
});

Deno.test("a failed union reports the branch whose type matched", () => {
  const run = (either: unknown) => {
    const errors: string[] = [];
    parseUnit(schema, { name: "a", either }, ["x"], errors);
    return errors;
  };
  assert.deepEqual(run({}), ["x.either.pool: is required"]);
  assert.deepEqual(run({ pool: "a", b: 1 }), ['x.either: unknown key "b"']);
  assert.deepEqual(run(5), ["x.either: Invalid input"]);
});

Deno.test("issueStrings appends to the given list", () => {
  const out = ["earlier"];
  issueStrings([{ code: "custom", message: "must be odd", path: [1] }], ["a"], out);
  assert.deepEqual(out, ["earlier", "a[1]: must be odd"]);
});
