import assert from "node:assert/strict";
import { z } from "zod";
import { closest, editDistance, keysAt, unknownKeyMessage } from "./suggest.ts";

Deno.test("editDistance counts a swap of neighbours as one edit", () => {
  assert.equal(editDistance("weight", "wieght"), 1);
  assert.equal(editDistance("balance", "balanse"), 1);
  assert.equal(editDistance("", "abc"), 3);
  assert.equal(editDistance("kitten", "sitting"), 3);
});

Deno.test("closest suggests only slips: one edit, or two in a long word", () => {
  const keys = ["balance", "members", "sticky", "health_check", "timeout", "root", "entry"];
  assert.equal(closest("balanse", keys), "balance");
  assert.equal(closest("Balance", keys), "balance");
  assert.equal(closest("timout", keys), "timeout");
  assert.equal(closest("helth_chek", keys), "health_check");
  assert.equal(closest("extra", keys), undefined);
  assert.equal(closest("zzz", keys), undefined);
  assert.equal(closest("rot", keys), "root");
});

Deno.test("keysAt finds the keys allowed at a path, through wrappers, lists and the chosen union branch", () => {
  const schema = z.object({
    pools: z.record(
      z.object({ balance: z.string(), members: z.array(z.object({ weight: z.number() })) })
        .strict(),
    ),
    runtime: z.discriminatedUnion("type", [
      z.object({ type: z.literal("static"), root: z.string() }),
      z.object({ type: z.literal("node"), entry: z.string() }),
    ]).optional(),
  });
  assert.deepEqual(keysAt(schema, ["pools", "api"]).sort(), ["balance", "members"]);
  assert.deepEqual(keysAt(schema, ["pools", "api", "members", 3]), ["weight"]);
  assert.deepEqual(keysAt(schema, ["runtime"], { runtime: { type: "static" } }).sort(), [
    "root",
    "type",
  ]);
  assert.deepEqual(keysAt(schema, ["runtime"]).sort(), ["entry", "root", "type"]);
  assert.deepEqual(keysAt(schema, ["nothing"]), []);
});

Deno.test("unknownKeyMessage adds did you mean when a key is close", () => {
  assert.equal(
    unknownKeyMessage("balanse", ["balance", "members"]),
    'unknown key "balanse"; did you mean "balance"?',
  );
  assert.equal(unknownKeyMessage("foo", ["balance"]), 'unknown key "foo"');
});
