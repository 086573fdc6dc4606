/**
 * Seeded fuzzing of the shared codec: generated chunked bodies, valid and mutated, go through
 * the one `ChunkedDecoder` in both modes (strict, as the front reads requests; lenient, as the
 * HTTP/1 client reads responses), split at random; generated heads go through `findHeadEnd`
 * (resumed piece by piece, with stale bytes past the end) and `scanFieldLines`. A reference
 * written the slow, obvious way (strings and regular expressions) says what must be accepted;
 * the codec must agree, throw only what its user's `fail` makes, and give back the body.
 * `SCALWS_FUZZ_CASES` sets the cases per mode (the suite runs a slice; `deno task fuzz` more).
 */

import assert from "node:assert/strict";
import { Gen } from "../base/_gen.ts";
import {
  ChunkedDecoder,
  type ChunkedOptions,
  FieldLines,
  findHeadEnd,
  latin1,
  scanFieldLines,
} from "./mod.ts";
import { bytesOf as bytes } from "../../tests/_support/bytes.ts";

const CASES = Number(Deno.env.get("SCALWS_FUZZ_CASES") ?? "2500");

class Refused extends Error {}

const STRICT: ChunkedOptions = { strict: true, maxTrailers: 16384, fail: (m) => new Refused(m) };
const LENIENT: ChunkedOptions = { strict: false, maxTrailers: 65536, fail: (m) => new Refused(m) };

/** Text bytes (HTAB, SP, VCHAR, obs-text). */
const TEXT_RE = /^[\t\x20-\x7e\x80-\xff]*$/;

const TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+";
const QUOTED =
  '"(?:[\\t \\x21\\x23-\\x5b\\x5d-\\x7e\\x80-\\xff]|\\\\[\\t\\x20-\\x7e\\x80-\\xff])*"';
/** What may follow a chunk size on its line: RFC 9112 7.1.1 (strict), any text (lenient). */
const STRICT_EXT = new RegExp(
  `^(?:[ \\t]*;[ \\t]*${TOKEN}(?:[ \\t]*=[ \\t]*(?:${TOKEN}|${QUOTED}))?)*[ \\t]*$`,
);
const LENIENT_EXT = /^(?:[;\t ][\t\x20-\x7e\x80-\xff]*)?$/;

/** Whether `ext` (after the size) is valid, or with `partial`, could still become valid. */
function extOk(ext: string, strict: boolean, partial = false): boolean {
  if (!strict) return LENIENT_EXT.test(ext);
  // Whatever state an unfinished extension is in, one of these ends it.
  return (partial ? ["", "a", '"', 'a"'] : [""]).some((end) => STRICT_EXT.test(ext + end));
}

type Outcome =
  | { kind: "done"; body: string; length: number }
  | { kind: "refused" }
  | { kind: "incomplete" }
  /** Lenient trailers with a bare CR: refused or not depending on where the input is split. */
  | { kind: "either" };

/** The chunked body at the start of `s`, read line by line the obvious way. */
function reference(s: string, strict: boolean, maxTrailers: number): Outcome {
  let pos = 0;
  let body = "";
  /** The next line without its end, null when the input ends first, false when refused. */
  const line = (): string | null | false => {
    const lf = s.indexOf("\n", pos);
    if (lf < 0) {
      // A prefix that can never become a line is already refused.
      const rest = s.slice(pos);
      const cr = rest.indexOf("\r");
      if (cr >= 0 && cr < rest.length - 1) return false;
      return null;
    }
    let text = s.slice(pos, lf);
    if (text.endsWith("\r")) text = text.slice(0, -1);
    else if (strict) return false;
    if (text.includes("\r")) return false;
    pos = lf + 1;
    return text;
  };
  for (;;) {
    const start = pos;
    const l = line();
    if (l === false) return { kind: "refused" };
    if (l === null) {
      return sizeLinePrefixOk(s.slice(start), strict)
        ? { kind: "incomplete" }
        : { kind: "refused" };
    }
    const m = /^([0-9a-fA-F]+)(.*)$/.exec(l);
    if (m === null || !extOk(m[2], strict) || l.length > 4096) return { kind: "refused" };
    if (m[1].replace(/^0+/, "").length > 13) return { kind: "refused" };
    const size = parseInt(m[1], 16);
    if (size === 0) break;
    if (s.length - pos < size) return { kind: "incomplete" };
    body += s.slice(pos, pos + size);
    pos += size;
    if (s.startsWith("\r\n", pos)) pos += 2;
    else if (!strict && s.startsWith("\n", pos)) pos += 1;
    else if (s.length - pos < 2 && "\r\n".startsWith(s.slice(pos))) return { kind: "incomplete" };
    else if (!strict && s.length === pos) return { kind: "incomplete" };
    else return { kind: "refused" };
  }
  // Trailers, then the blank line.
  let trailerBytes = 0;
  let either = false;
  for (;;) {
    const lf = s.indexOf("\n", pos);
    const raw = lf < 0 ? s.slice(pos) : s.slice(pos, lf);
    if (raw === "" || raw === "\r") {
      if (lf < 0) return { kind: "incomplete" };
      if (raw === "" && strict) return { kind: "refused" };
      return either ? { kind: "either" } : { kind: "done", body, length: lf + 1 };
    }
    if (strict) {
      if (raw.startsWith(" ") || raw.startsWith("\t") || raw.startsWith(":")) {
        return { kind: "refused" };
      }
      const cr = raw.endsWith("\r");
      const text = cr ? raw.slice(0, -1) : raw;
      if (!TEXT_RE.test(text) || (lf >= 0 && !cr)) return { kind: "refused" };
      trailerBytes += raw.length;
      if (trailerBytes > maxTrailers) return { kind: "refused" };
      if (lf < 0) return { kind: "incomplete" };
    } else {
      if (raw.includes("\x00")) return { kind: "refused" };
      if (raw.slice(0, -1).includes("\r")) either = true;
      trailerBytes += raw.length;
      if (trailerBytes > maxTrailers) return either ? { kind: "either" } : { kind: "refused" };
      if (lf < 0) return either ? { kind: "either" } : { kind: "incomplete" };
    }
    pos = lf + 1;
  }
}

/** Whether an unfinished size line could still become a valid one. */
function sizeLinePrefixOk(rest: string, strict: boolean): boolean {
  if (rest.length === 0) return true;
  const cr = rest.endsWith("\r");
  const text = cr ? rest.slice(0, -1) : rest;
  if (text.includes("\r") || text.includes("\n")) return false;
  const m = /^([0-9a-fA-F]*)(.*)$/.exec(text);
  if (m === null || !extOk(m[2], strict, !cr) || text.length > 4096) return false;
  if (m[1] === "" && text.length > 0) return false;
  if (m[1].replace(/^0+/, "").length > 13) return false;
  return !(rest.endsWith("\r") && text.length === 0);
}

/** Feeds `input` to a decoder in random pieces; what it made of it. */
function decode(g: Gen, input: Uint8Array, opts: ChunkedOptions): Outcome {
  const d = new ChunkedDecoder(opts);
  let body = "";
  let pos = 0;
  try {
    while (pos < input.length && !d.done) {
      const end = g.chance(0.3) ? input.length : Math.min(input.length, pos + 1 + g.int(12));
      while (pos < end && !d.done) {
        const before = pos;
        pos = d.decode(input, pos, end);
        assert.ok(pos > before && pos <= end, "no progress or past the end");
        assert.ok(d.spanStart >= before && d.spanEnd <= pos && d.spanStart <= d.spanEnd);
        body += latin1(input, d.spanStart, d.spanEnd);
      }
    }
  } catch (err) {
    if (err instanceof Refused) return { kind: "refused" };
    throw err;
  }
  assert.equal(d.total, body.length);
  return d.done ? { kind: "done", body, length: pos } : { kind: "incomplete" };
}

const EXT_CHARS = ["a", "=", '"', " ", "\t", ";", "x", "\x80"];

/** A chunked body, valid for `strict` (bare LF line ends only in lenient mode). */
function chunked(g: Gen, strict: boolean, binary = true): string {
  const eol = () => (strict || g.chance(0.8) ? "\r\n" : "\n");
  let s = "";
  for (let n = g.int(5); n > 0; n--) {
    const size = g.chance(0.1) ? 1 + g.int(5000) : 1 + g.int(40);
    let hex = size.toString(16);
    if (g.chance(0.2)) hex = hex.toUpperCase();
    if (g.chance(0.1)) hex = "00" + hex;
    s += hex;
    if (g.chance(0.2) && !strict) {
      s += ";";
      for (let i = g.int(10); i > 0; i--) s += g.pick(EXT_CHARS);
    } else if (g.chance(0.2)) {
      // RFC 9112 7.1.1, with optional whitespace around ";" and "=".
      const bws = () => g.pick(["", "", " ", "\t "]);
      for (let n = 1 + g.int(2); n > 0; n--) {
        s += bws() + ";" + bws() + g.token(6);
        if (g.chance(0.6)) {
          s += bws() + "=" + bws() +
            (g.chance(0.5) ? g.token(6) : '"' + g.pick(["", "a b", 'x\\"y', "; =", "\x80"]) + '"');
        }
      }
    }
    s += eol();
    for (let i = 0; i < size; i++) s += String.fromCharCode(binary ? g.int(256) : 0x61 + g.int(26));
    s += eol();
  }
  s += "0" + eol();
  for (let n = g.chance(0.3) ? 1 + g.int(3) : 0; n > 0; n--) {
    s += `${g.token()}: ${g.token()}${eol()}`;
  }
  return s + eol();
}

const NASTY = "\r\n\t ;:0aFg\x00\x7f\x80-+x";

/** Replaces, inserts or deletes a few bytes, or cuts the input short. */
function mutate(g: Gen, s: string): string {
  if (g.chance(0.15)) return s.slice(0, g.int(s.length));
  let out = s;
  for (let n = 1 + g.int(3); n > 0; n--) {
    const at = g.int(out.length + 1);
    const c = NASTY[g.int(NASTY.length)];
    const op = g.int(3);
    if (op === 0) out = out.slice(0, at) + c + out.slice(at + 1);
    else if (op === 1) out = out.slice(0, at) + c + out.slice(at);
    else out = out.slice(0, at) + out.slice(at + 1);
  }
  return out;
}

function agree(input: string, got: Outcome, want: Outcome): void {
  const what = JSON.stringify(input.length > 300 ? input.slice(0, 300) + "..." : input);
  if (want.kind === "either") return;
  if (want.kind === "incomplete") {
    // An unfinished input may already be refused by its first bad byte, never finished.
    assert.notEqual(got.kind, "done", what);
    return;
  }
  assert.deepEqual(got, want, what);
}

for (const [mode, opts] of [["strict", STRICT], ["lenient", LENIENT]] as const) {
  Deno.test(`fuzz: ChunkedDecoder (${mode}) agrees with the reference on generated bodies`, () => {
    const g = new Gen(mode === "strict" ? 0xc0dec : 0x1e41e47);
    const seen = { done: 0, refused: 0, incomplete: 0, either: 0 };
    for (let i = 0; i < CASES; i++) {
      const valid = chunked(g, opts.strict);
      const text = (g.chance(0.5) ? mutate(g, valid) : valid) + (g.chance(0.3) ? "NEXT" : "");
      const want = reference(text, opts.strict, opts.maxTrailers);
      const got = decode(g, bytes(text), opts);
      agree(text, got, want);
      seen[want.kind]++;
      if (text.startsWith(valid)) {
        assert.equal(got.kind, "done", JSON.stringify(text.slice(0, 200)));
      }
    }
    // The generator must keep producing both sides, or the check proves nothing.
    assert.ok(seen.done > CASES / 3 && seen.refused > CASES / 10, JSON.stringify(seen));
  });
}

Deno.test("fuzz: strict mode refuses what lenient mode takes: bare LF line ends", () => {
  const g = new Gen(0x5eed);
  for (let i = 0; i < CASES / 5; i++) {
    const text = chunked(g, false, false);
    if (!text.replaceAll("\r\n", "").includes("\n")) continue;
    assert.equal(decode(g, bytes(text), LENIENT).kind, "done");
    assert.equal(
      decode(g, bytes(text), STRICT).kind,
      "refused",
      JSON.stringify(text.slice(0, 200)),
    );
  }
});

/** Field lines as the reference reads them: [name, value] pairs, or null when refused. */
function referenceFields(s: string, max: number): [string, string][] | null {
  const out: [string, string][] = [];
  let pos = 0;
  for (;;) {
    const lf = s.indexOf("\n", pos);
    let l = s.slice(pos, lf);
    if (l.endsWith("\r")) l = l.slice(0, -1);
    pos = lf + 1;
    if (l.includes("\r")) return null;
    if (l === "") return out;
    if (out.length === max) return null;
    const m = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[\t ]*(.*?)[\t ]*$/.exec(l);
    if (m === null || !TEXT_RE.test(m[2])) return null;
    out.push([m[1], m[2]]);
  }
}

const START = "GET / HTTP/1.1\r\n";
const NAMES = ["Host", "content-length", "X-A", "te", "Accept-Encoding", "x_y"];

Deno.test("fuzz: findHeadEnd (resumed, over stale bytes) and scanFieldLines agree with the reference", () => {
  const g = new Gen(0x4ead);
  const lines = new FieldLines(20);
  let accepted = 0, refused = 0;
  for (let i = 0; i < CASES; i++) {
    const eol = () => (g.chance(0.85) ? "\r\n" : "\n");
    let head = "";
    for (let n = g.int(24); n > 0; n--) {
      const value = Array.from({ length: g.int(12) }, () => g.pick([..."ab c\t\x80~/="])).join("");
      head += `${g.chance(0.7) ? g.pick(NAMES) : g.token()}:${
        g.chance(0.8) ? " " : ""
      }${value}${eol()}`;
    }
    head += eol();
    const text = START + (g.chance(0.4) ? mutate(g, head) : head);
    // Stale bytes after the end must never be read: the buffer holds a blank line there.
    const buf = bytes(text + "\r\n\r\n\n\n");
    const whole = findHeadEnd(buf, 0, text.length);
    const endRef = /\n\r?\n/.exec(text);
    assert.equal(whole < 0 ? -1 : whole, endRef === null ? -1 : endRef.index + endRef[0].length);
    // Resumed as bytes arrive.
    let scan = 0, got = -1;
    for (let end = 0; end <= text.length; end += 1 + g.int(8)) {
      got = findHeadEnd(buf, scan, end);
      if (got >= 0) break;
      scan = ~got;
    }
    if (got < 0) got = findHeadEnd(buf, scan, text.length);
    assert.equal(got, whole, JSON.stringify(text));
    if (whole < 0) continue;
    // findHeadEnd's blank line must be the one the scanner stops at, or the head is refused.
    const n = scanFieldLines(buf, START.length, lines);
    const want = referenceFields(text.slice(START.length, whole), lines.max);
    if (want === null) {
      assert.ok(n < 0 || lines.end !== whole, JSON.stringify(text));
      refused++;
      continue;
    }
    assert.equal(n, want.length, JSON.stringify(text));
    assert.equal(lines.end, whole);
    const s = latin1(buf, 0, whole);
    const fields: [string, string][] = [];
    for (let k = 0; k < n; k++) {
      const sp = lines.spans;
      fields.push([s.slice(sp[k * 4], sp[k * 4 + 1]), s.slice(sp[k * 4 + 2], sp[k * 4 + 3])]);
    }
    assert.deepEqual(fields, want);
    accepted++;
  }
  assert.ok(accepted > CASES / 3 && refused > CASES / 20, `${accepted} ${refused}`);
});
