import assert from "node:assert/strict";
import { parseTargeted } from "./targeted.ts";

Deno.test("parseTargeted reads a Structured Fields Dictionary of cache directives", () => {
  const cc = parseTargeted("max-age=60, stale-while-revalidate=5, must-revalidate")!;
  assert.equal(cc.maxAge, 60);
  assert.equal(cc.staleWhileRevalidate, 5);
  assert.equal(cc.mustRevalidate, true);
  assert.equal(cc.sMaxage, -1);
  assert.equal(parseTargeted("no-store")!.noStore, true);
  assert.equal(parseTargeted("private;x=1")!.private, true);
  assert.equal(parseTargeted("no-store=?0")!.noStore, false);
});

Deno.test("parseTargeted: a directive of the wrong type is ignored, the rest apply", () => {
  const cc = parseTargeted('max-age="60", no-cache, foo=(1 2)')!;
  assert.equal(cc.maxAge, -1);
  assert.equal(cc.noCache, true);
  assert.equal(parseTargeted("max-age=1.5")!.maxAge, -1);
  assert.equal(parseTargeted("max-age=-1")!.maxAge, -1);
});

Deno.test("parseTargeted: absent, empty or invalid values are null (Cache-Control applies)", () => {
  for (const bad of [null, "", "  ", "max-age=60,", "Max-Age=60", "max-age=6 0", "a,,b", '"x"']) {
    assert.equal(parseTargeted(bad), null, String(bad));
  }
});
