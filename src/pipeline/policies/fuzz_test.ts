/**
 * Seeded fuzzing of the policy parsers that take free text: `checkPattern` (rewrite.regex),
 * `parseTemplate` (redirect and header values), `parseHtpasswd` (users_file) and `negotiate`
 * (Accept-Encoding). None may throw; an accepted pattern must compile and stay fast on
 * adversarial paths of `MAX_SUBJECT` bytes; an accepted template must hold only known parts.
 * `SCALWS_FUZZ_CASES` sets the number of cases (the suite runs a slice; `deno task fuzz` 100k).
 */
import assert from "node:assert/strict";
import { seeded } from "../../base/random.ts";
import { negotiate } from "./accept_encoding.ts";
import { parseHtpasswd } from "../../config/policies.ts";
import { checkPattern, MAX_SUBJECT } from "../../config/regex_safety.ts";
import { parseTemplate } from "../../config/parse_template.ts";

const CASES = Number(Deno.env.get("SCALWS_FUZZ_CASES") ?? "2000");
const REGEX_ALPHABET = "^$()[]{}|*+?.\\/a1,:=<!-dwsbk0";
const TEXT_ALPHABET = "$$hostpathqueryscheme/:?{}x19 \t:#\n";

function text(r: () => number, alphabet: string, max: number): string {
  const n = Math.floor(r() * max);
  let s = "";
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(r() * alphabet.length)];
  return s;
}

Deno.test("fuzz: checkPattern never throws; what it accepts compiles and runs fast", () => {
  const r = seeded(16);
  const subjects = [
    "/" + "a".repeat(MAX_SUBJECT - 2) + "!",
    "/" + "/a".repeat(MAX_SUBJECT / 2 - 1),
  ];
  let accepted = 0;
  for (let i = 0; i < CASES; i++) {
    const p = "^" + text(r, REGEX_ALPHABET, 24);
    const result = checkPattern(p);
    if (typeof result === "string") continue;
    accepted++;
    const re = new RegExp(p);
    for (const s of subjects) {
      const t = performance.now();
      re.exec(s);
      assert.ok(performance.now() - t < 250, `${p} took too long`);
    }
  }
  assert.ok(accepted > 0);
});

Deno.test("fuzz: parseTemplate, parseHtpasswd and negotiate never throw", () => {
  const r = seeded(61);
  for (let i = 0; i < CASES; i++) {
    const t = text(r, TEXT_ALPHABET, 40);
    const parts = parseTemplate(t, i % 2 === 0 ? -1 : 3);
    if (typeof parts !== "string") {
      for (const p of parts) {
        assert.ok(typeof p === "string" || "variable" in p || ("group" in p && p.group <= 3));
      }
    }
    const h = parseHtpasswd(text(r, "ab:$2yb{SHA}\n#x", 60));
    assert.ok(Array.isArray(h.errors));
    const c = negotiate(text(r, "gzip,br;q=0.5*xidentity ", 40), ["br", "gzip"]);
    assert.ok(c === null || c === "br" || c === "gzip");
  }
});
