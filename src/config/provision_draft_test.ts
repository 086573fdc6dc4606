import assert from "node:assert/strict";
import { append, field, isRecord, listField } from "./provision_draft.ts";

Deno.test("draft helpers: mappings, fields of mappings only, lists of any length", () => {
  assert.equal(isRecord({}), true);
  assert.equal(isRecord([]), false);
  assert.equal(isRecord(null), false);
  assert.equal(field({ a: 1 }, "a"), 1);
  assert.equal(field([1], "0"), undefined);
  assert.deepEqual(listField({ a: [1, 2] }, "a"), [1, 2]);
  assert.deepEqual(listField({ a: "x" }, "a"), []);
  const to: string[] = ["a"];
  append(to, Array.from({ length: 200_000 }, (_, i) => `${i}`));
  assert.equal(to.length, 200_001);
});
