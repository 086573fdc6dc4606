import assert from "node:assert/strict";
import { fuzz, reference, referenceChunked } from "./_fuzz.ts";

/** `SCALWS_FUZZ_CASES` (per seed): the suite runs a slice, `deno task fuzz` 100,000. */
const CASES = Number(Deno.env.get("SCALWS_FUZZ_CASES") ?? "3000");

Deno.test("front fuzz: seeded cases, parser and reference agree on each", () => {
  for (const seed of [101, 202]) {
    const stats = fuzz(seed, CASES);
    assert.equal(stats.cases, CASES);
    // The generator must keep producing both sides, or the check proves nothing.
    assert.ok(stats.accepted > CASES / 3 && stats.refused > CASES / 4, JSON.stringify(stats));
  }
});

Deno.test("front fuzz: the reference itself refuses the classic smuggling heads", () => {
  const p = "POST / HTTP/1.1\r\nHost: a\r\n";
  assert.equal(reference(p + "Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"), null);
  assert.equal(reference(p + "X: a\r\n b\r\n\r\n"), null);
  assert.equal(reference(p + "Content-Length: 1, 2\r\n\r\n"), null);
  assert.equal(reference(p)?.method, undefined, "incomplete");
  assert.equal(reference(p + "\r\n")?.method, "POST");
  assert.deepEqual(referenceChunked("3\r\nabc\r\n0\r\n\r\n"), { body: "abc", length: 13 });
  assert.equal(referenceChunked("3\nabc\r\n0\r\n\r\n"), null);
});
