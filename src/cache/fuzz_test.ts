/**
 * Seeded fuzzer of the cache's parsers: `Cache-Control`, HTTP dates, `Vary`, `Range` and
 * `If-None-Match`. Generated valid values parse to what the generator meant; mutated ones never
 * throw and never yield a value out of its range (a parser refuses what it does not
 * understand). `SCALWS_FUZZ_CASES` sets the number of cases (the suite runs a slice; `deno task
 * fuzz` runs 100,000).
 */
import assert from "node:assert/strict";
import { Gen } from "../base/_gen.ts";
import { DELTA_MAX, parseCacheControl } from "./cache_control.ts";
import { noneMatchMatches } from "./conditional.ts";
import { formatHttpDate, parseHttpDate } from "./http_date.ts";
import { parseRange } from "./range.ts";
import { parseVary } from "./vary.ts";

const CASES = Number(Deno.env.get("SCALWS_FUZZ_CASES") ?? "2000");

const NOISE = ' \t,;=":\\/-*abcXYZ0123456789\u00e9\u0000\r\n';

/** Replaces, inserts or deletes a few characters. */
function mutate(g: Gen, s: string): string {
  let out = s;
  const n = 1 + g.int(3);
  for (let i = 0; i < n; i++) {
    const at = g.int(out.length + 1);
    const op = g.int(3);
    const c = g.pick(NOISE.split(""));
    if (op === 0) out = out.slice(0, at) + c + out.slice(at + 1);
    else if (op === 1) out = out.slice(0, at) + c + out.slice(at);
    else out = out.slice(0, at) + out.slice(at + 1);
  }
  return out;
}

const FLAGS = ["no-store", "no-cache", "private", "public", "must-revalidate", "proxy-revalidate"];
const SECONDS = ["max-age", "s-maxage", "stale-while-revalidate", "stale-if-error"];

Deno.test("fuzz: Cache-Control, generated and mutated", () => {
  const g = new Gen(0xcac4e);
  for (let i = 0; i < CASES; i++) {
    const parts: string[] = [];
    const want: Record<string, number> = {};
    const used = new Set<string>();
    for (let k = g.int(5); k > 0; k--) {
      if (g.chance(0.5)) {
        const f = g.pick(FLAGS);
        parts.push(g.chance(0.2) ? f.toUpperCase() : f);
      } else {
        const d = g.pick(SECONDS);
        if (used.has(d)) continue;
        used.add(d);
        const v = g.chance(0.05) ? 99_999_999_999 : g.int(100_000);
        want[d] = Math.min(v, DELTA_MAX);
        parts.push(g.chance(0.2) ? `${d}="${v}"` : `${d}=${v}`);
      }
      if (g.chance(0.1)) parts.push('ext="a, b"');
    }
    const text = parts.join(g.chance(0.5) ? ", " : ",");
    const cc = parseCacheControl(text);
    assert.equal(cc.invalid, false, text);
    assert.equal(cc.maxAge, want["max-age"] ?? -1, text);
    assert.equal(cc.sMaxage, want["s-maxage"] ?? -1, text);
    assert.equal(cc.staleWhileRevalidate, want["stale-while-revalidate"] ?? -1, text);
    assert.equal(cc.staleIfError, want["stale-if-error"] ?? -1, text);
    const bad = parseCacheControl(mutate(g, text));
    for (const v of [bad.maxAge, bad.sMaxage, bad.staleIfError, bad.staleWhileRevalidate]) {
      assert.ok(v === -1 || (Number.isInteger(v) && v >= 0 && v <= DELTA_MAX), text);
    }
  }
});

Deno.test("fuzz: HTTP dates round-trip; mutated ones are NaN or whole seconds", () => {
  const g = new Gen(0xda7e);
  for (let i = 0; i < CASES; i++) {
    const ms = Date.UTC(
      1970 + g.int(100),
      g.int(12),
      1 + g.int(28),
      g.int(24),
      g.int(60),
      g.int(60),
    );
    const text = formatHttpDate(ms);
    assert.equal(parseHttpDate(text), ms, text);
    const m = parseHttpDate(mutate(g, text));
    assert.ok(Number.isNaN(m) || (Number.isInteger(m) && m % 1000 === 0), text);
  }
});

Deno.test("fuzz: Range gives an in-bounds span, unsatisfiable or null", () => {
  const g = new Gen(0x4a9e);
  for (let i = 0; i < CASES; i++) {
    const size = g.int(5000);
    const a = g.int(6000);
    const b = a + g.int(3000);
    const text = g.pick([`bytes=${a}-${b}`, `bytes=${a}-`, `bytes=-${1 + g.int(6000)}`]);
    for (const t of [text, mutate(g, text)]) {
      const r = parseRange(t, size);
      if (r === null || r === "unsatisfiable") continue;
      assert.ok(r.start >= 0 && r.start <= r.end && r.end < size, `${t} of ${size}`);
    }
    const r = parseRange(`bytes=${a}-${b}`, size);
    if (a < size) assert.deepEqual(r, { start: a, end: Math.min(b, size - 1) });
    else assert.equal(r, "unsatisfiable");
  }
});

Deno.test("fuzz: Vary and If-None-Match never throw; Vary names are lower-case tokens", () => {
  const g = new Gen(0x7a27);
  const names = ["Accept-Encoding", "Accept", "X-Theme", "Cookie", "*"];
  for (let i = 0; i < CASES; i++) {
    const text = Array.from({ length: 1 + g.int(3) }, () => g.pick(names)).join(", ");
    for (const t of [text, mutate(g, text)]) {
      const v = parseVary(t);
      if (v === null) continue;
      for (const n of v) assert.ok(n === "*" || /^[!#$%&'*+\-.^_`|~0-9a-z]+$/.test(n), t);
    }
    const tag = `"${"abc".slice(0, 1 + g.int(3))}${g.int(10)}"`;
    const list = `W/"x", ${tag}`;
    assert.equal(noneMatchMatches(list, tag), true);
    noneMatchMatches(mutate(g, list), tag);
  }
});
