import assert from "node:assert/strict";
import { normaliseValue, parseVary, varyMatches, varyValues } from "./vary.ts";

Deno.test("parseVary lower-cases, sorts and de-duplicates; * wins; malformed is null", () => {
  assert.deepEqual(parseVary("Accept-Encoding, accept-language,ACCEPT-ENCODING"), [
    "accept-encoding",
    "accept-language",
  ]);
  assert.deepEqual(parseVary("Accept, *"), ["*"]);
  assert.deepEqual(parseVary(null), []);
  assert.equal(parseVary("Accept Encoding"), null);
});

Deno.test("normaliseValue trims, folds list whitespace, lower-cases Accept-* only", () => {
  assert.equal(normaliseValue("accept-encoding", " GZIP ,  br"), "gzip,br");
  assert.equal(normaliseValue("x-theme", "Dark  Blue"), "Dark Blue");
  assert.equal(normaliseValue("accept-encoding", null), null);
});

Deno.test("varyMatches compares normalised values; absent matches only absent", () => {
  const names = ["accept-encoding", "x-theme"];
  const stored = varyValues(names, new Headers({ "accept-encoding": "gzip, br" }));
  assert.equal(varyMatches(names, stored, new Headers({ "accept-encoding": "GZIP,br" })), true);
  assert.equal(varyMatches(names, stored, new Headers({ "accept-encoding": "br" })), false);
  assert.equal(
    varyMatches(names, stored, new Headers({ "accept-encoding": "gzip,br", "x-theme": "" })),
    false,
  );
});
