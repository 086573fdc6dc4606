/**
 * Seeded fuzzing of `normalizePath`, the path every route, `deny_paths` and policy sees:
 * generated paths of slashes, dots, their percent-encodings and other escapes. Invariants: the
 * result starts with `/`, has no empty segment, no `.` or `..` segment even once decoded, and
 * is its own normal form. `SCALWS_FUZZ_CASES` sets the cases (the suite runs a slice;
 * `deno task fuzz` 100,000).
 */

import assert from "node:assert/strict";
import { normalizePath } from "./path.ts";
import { decodeUnreserved } from "../base/mod.ts";
import { Gen } from "../base/_gen.ts";

const CASES = Number(Deno.env.get("SCALWS_FUZZ_CASES") ?? "20000");

const ATOMS = [
  "/",
  "//",
  ".",
  "..",
  "%2e",
  "%2E",
  "%2f",
  "%2F",
  "%25",
  "%",
  "%2",
  "%%2e",
  "%252e",
  "%41",
  "%7e",
  "%5C",
  "\\",
  "~",
  "a",
  "b.c",
];

Deno.test("path fuzz: normalised paths climb nowhere, keep no dot segment, and are stable", () => {
  const g = new Gen(0x9a7);
  for (let i = 0; i < CASES; i++) {
    let p = g.chance(0.9) ? "/" : "";
    for (let n = 1 + g.int(10); n > 0; n--) p += g.pick(ATOMS);
    const q = normalizePath(p);
    const what = `${JSON.stringify(p)} -> ${JSON.stringify(q)}`;
    assert.ok(q.startsWith("/") && !q.includes("//"), what);
    for (const seg of decodeUnreserved(q).split("/").slice(1)) {
      assert.ok(seg !== "." && seg !== "..", what);
    }
    assert.equal(normalizePath(q), q, what);
  }
});
