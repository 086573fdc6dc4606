/**
 * Seeded fuzzer of the front's parser: generated requests, valid and malicious, mutated at the
 * byte and the field level, go through `findHeadEnd`, `parseRequestHead` and `ChunkedBody`
 * split at random points. A reference reader written the slow, obvious way (lines, regular
 * expressions) says what must be accepted; the parser must agree on every case, never throw
 * anything but `HeadError`, never read past its input, and give back the generated body.
 *
 * `fuzz_test.ts` runs a slice in the suite; `deno task fuzz` runs 100,000 cases per seed;
 * `deno run src/front/_fuzz.ts [cases] [seed]` runs any other amount.
 */

import { Gen } from "../base/_gen.ts";
import { ChunkedDecoder, findHeadEnd } from "../wire/mod.ts";
import { REQUEST_CHUNKED } from "./read_chunked_request.ts";
import { HeadError, MAX_HEAD, parseRequestHead, RequestHead } from "./parse_request_head.ts";

const NASTY = '\x00\r\n \t\x7f\x80\xff:,;"\x01\x1b/?';

/** The shared generator, plus the shapes of a request: names, field values, targets. */
class RequestGen extends Gen {
  name(max: number): string {
    const chars = "abcdefghijklmnopqrstuvwxyz0123456789";
    let s = "";
    for (let i = 1 + this.int(max); i > 0; i--) s += chars[this.int(chars.length)];
    return s;
  }
  value(): string {
    let s = "";
    for (let i = this.int(24); i > 0; i--) {
      s += String.fromCharCode(this.chance(0.04) ? 0x80 + this.int(128) : 0x21 + this.int(94));
      if (this.chance(0.1)) s += " ";
    }
    return s.trim();
  }
  target(): string {
    const k = this.int(20);
    if (k === 0) return "*";
    if (k === 1) return `http://${this.name(8)}.test${this.chance(0.5) ? "/" + this.token() : ""}`;
    let s = "";
    for (let i = 1 + this.int(4); i > 0; i--) s += "/" + this.token(6);
    if (this.chance(0.3)) s += "?" + this.token() + "=" + this.token();
    return s;
  }
}

/** One generated case: bytes of a request (head and body) and what was meant. */
export interface FuzzCase {
  readonly input: string;
  /** The body as generated (before any mutation). */
  readonly body: string;
  readonly mutated: boolean;
}

const FRAMING_TRICKS = [
  "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
  "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
  "Content-Length: 3\r\nContent-Length: 4\r\n",
  "Content-Length: 3, 4\r\n",
  "Content-Length: 18446744073709551616\r\n",
  "Content-Length: -1\r\n",
  "Transfer-Encoding: chunked, identity\r\n",
  "Transfer-Encoding: gzip, chunked\r\n",
  "Transfer-Encoding: xchunked\r\n",
  "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
  "X-A: a\r\n b\r\n",
  "Content-Length : 3\r\n",
  "Host: other.test\r\n",
  "Upgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\n",
  "X-A: a\rb\r\n",
  "X\x00A: v\r\n",
  ": v\r\n",
];

const CHUNK_TRICKS = ["0x3", "+3", "-3", "10000000000000003", "3\n", "3;a\x00", "3\r"];

/** `count` cases from `seed`, as `fuzz` makes them (for the differential test). */
export function generateCases(seed: number, count: number): FuzzCase[] {
  const g = new RequestGen(seed);
  return Array.from({ length: count }, () => generate(g));
}

/** Generates the next case of `g`: a valid request, maybe mutated. */
function generate(g: RequestGen): FuzzCase {
  const method = g.pick(["GET", "POST", "PUT", "HEAD", "DELETE", "OPTIONS", g.token(8)]);
  const target = g.target();
  const minor = g.chance(0.1) ? 0 : 1;
  const eol = () => (g.chance(0.05) ? "\n" : "\r\n");
  let head = `${method} ${target === "*" && method !== "OPTIONS" ? "/" : target} HTTP/1.${minor}`;
  head += eol();
  const fields: string[] = [];
  if (minor === 1 || g.chance(0.5)) {
    // Mostly names a URL can hold (the differential test compares with Deno.serve's URL).
    fields.push(`Host: ${g.chance(0.9) ? g.name(10) : g.token(10)}.test`);
  }
  for (let i = g.int(g.chance(0.02) ? 140 : 8); i > 0; i--) {
    fields.push(`${g.token()}: ${g.value()}`);
  }
  let body = "";
  let wire = "";
  const framing = g.int(4);
  if (framing === 1 || (framing === 2 && minor === 0)) {
    for (let i = g.int(g.chance(0.05) ? 5000 : 60); i > 0; i--) {
      body += g.pick(["a", "\r", "\n", "z"]);
    }
    fields.push(
      `${g.pick(["Content-Length", "content-length", "CONTENT-LENGTH"])}: ${body.length}`,
    );
    wire = body;
  } else if (framing === 2) {
    fields.push(`Transfer-Encoding: ${g.pick(["chunked", "Chunked", " chunked "])}`);
    for (let n = g.int(4); n > 0; n--) {
      const part = g.token(g.chance(0.1) ? 40 : 10);
      body += part;
      const ext = g.chance(0.2) ? `;${g.token(4)}=${g.token(4)}` : "";
      wire += part.length.toString(g.chance(0.5) ? 16 : 16).toUpperCase() + ext + "\r\n" + part +
        "\r\n";
    }
    wire += "0\r\n" + (g.chance(0.2) ? `${g.token(6)}: ${g.value()}\r\n` : "") + "\r\n";
  }
  if (g.chance(0.1)) fields.push(g.pick(["Connection: close", "Connection: keep-alive"]));
  if (g.chance(0.05)) fields.push("Expect: 100-continue");
  for (const f of fields) head += f + eol();
  head += eol();
  let input = head + wire;
  let mutated = false;
  if (g.chance(0.6)) {
    mutated = true;
    for (let m = 1 + g.int(3); m > 0; m--) input = mutate(g, input);
  }
  return { input, body, mutated };
}

function mutate(g: RequestGen, s: string): string {
  const headEnd = Math.max(1, s.indexOf("\r\n\r\n") >= 0 ? s.indexOf("\r\n\r\n") : s.length);
  const at = g.int(g.chance(0.8) ? headEnd : s.length);
  switch (g.int(7)) {
    case 0: // insert a nasty byte
      return s.slice(0, at) + g.pick([...NASTY]) + s.slice(at);
    case 1: // delete a byte
      return s.slice(0, at) + s.slice(at + 1);
    case 2: // replace a byte
      return s.slice(0, at) + String.fromCharCode(g.int(256)) + s.slice(at + 1);
    case 3: { // a framing trick after the request line
      const line = s.indexOf("\n") + 1;
      return s.slice(0, line) + g.pick(FRAMING_TRICKS) + s.slice(line);
    }
    case 4: { // a chunk-size trick where the body starts
      const b = s.indexOf("\r\n\r\n");
      if (b < 0) return s;
      return s.slice(0, b + 4) + g.pick(CHUNK_TRICKS) + s.slice(b + 4);
    }
    case 5: // duplicate a line
    {
      const from = s.lastIndexOf("\n", at) + 1;
      const to = s.indexOf("\n", at);
      if (to < 0) return s;
      return s.slice(0, to + 1) + s.slice(from, to + 1) + s.slice(to + 1);
    }
    default: // swap line ends
      return s.replace(g.pick(["\r\n", "\n"]), g.pick(["\n", "\r", "\r\r\n", " \r\n"]));
  }
}

// -------------------------------------------------------------------------------------------
// The reference reader: the same rules, written the obvious way.

/** Only SP and HTAB are whitespace here (`trim()` would take U+00A0 too). */
const OWS = /^[ \t]+|[ \t]+$/g;
const REQUEST_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) ([\x21-\x7e]+) HTTP\/1\.([0-9])$/;
const FIELD = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*([\t\x20-\x7e\x80-\xff]*)$/;

/** What the reference makes of a head: null when refused. */
export interface Reading {
  method: string;
  target: string;
  fields: string[];
  contentLength: number;
  chunked: boolean;
  keepAlive: boolean;
  /** Bytes of the head. */
  length: number;
}

/** The head of `s` as the rules read it; undefined when incomplete, null when refused. */
export function reference(s: string): Reading | null | undefined {
  const m = /\n\r?\n/.exec(s);
  if (m === null) return undefined;
  const length = m.index + m[0].length;
  if (length > MAX_HEAD) return null;
  const lines = s.slice(0, m.index).split("\n").map((l) => l.endsWith("\r") ? l.slice(0, -1) : l);
  if (lines.some((l) => l.includes("\r"))) return null;
  const rl = REQUEST_LINE.exec(lines[0]);
  if (rl === null) return null;
  const [, method, rawTarget, minorDigit] = rl;
  const minor = minorDigit === "0" ? 0 : 1;
  let target = rawTarget.split("#")[0];
  if (!target.startsWith("/")) {
    if (target === "*") {
      if (method !== "OPTIONS") return null;
    } else {
      const a = /^https?:\/\/([^/?]*)(.*)$/i.exec(target);
      if (a === null || a[1] === "" || a[1].includes("@")) return null;
      target = a[2] === "" ? "/" : a[2].startsWith("?") ? "/" + a[2] : a[2];
    }
  }
  const fields: string[] = [];
  if (lines.length - 1 > 128) return null;
  let cl = -1, te = 0, hosts = 0, conn = "", upgrade: string | null = null;
  for (const line of lines.slice(1)) {
    const f = FIELD.exec(line);
    if (f === null) return null;
    const name = f[1].toLowerCase();
    const value = f[2].replace(/[ \t]+$/, "");
    fields.push(name, value);
    if (name === "host") hosts++;
    else if (name === "content-length") {
      for (const part of value.split(",")) {
        const p = part.replace(OWS, "");
        if (!/^[0-9]{1,15}$/.test(p)) return null;
        if (cl >= 0 && Number(p) !== cl) return null;
        cl = Number(p);
      }
    } else if (name === "transfer-encoding") {
      te++;
      if (value.toLowerCase() !== "chunked") return null;
    } else if (name === "connection") conn += "," + value.toLowerCase();
    else if (name === "upgrade") upgrade = (upgrade === null ? "" : upgrade + ",") + value;
  }
  if (hosts > 1 || te > 1) return null;
  if (te === 1 && (cl >= 0 || minor === 0)) return null;
  if (
    upgrade !== null &&
    upgrade.split(",").some((p) => p.replace(OWS, "").split("/")[0].toLowerCase() === "h2c")
  ) return null;
  const tokens = conn.split(",").map((t) => t.replace(OWS, ""));
  const keepAlive = !tokens.includes("close") && (minor === 1 || tokens.includes("keep-alive"));
  return { method, target, fields, contentLength: cl, chunked: te === 1, keepAlive, length };
}

const TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+";
const QUOTED =
  '"(?:[\\t \\x21\\x23-\\x5b\\x5d-\\x7e\\x80-\\xff]|\\\\[\\t\\x20-\\x7e\\x80-\\xff])*"';
/** Chunk extensions as RFC 9112 7.1.1 writes them, with optional whitespace (BWS). */
const EXTENSIONS = new RegExp(
  `^(?:[ \\t]*;[ \\t]*${TOKEN}(?:[ \\t]*=[ \\t]*(?:${TOKEN}|${QUOTED}))?)*[ \\t]*$`,
);

/** The body of a chunked message at the start of `s`, the obvious way; null when refused. */
export function referenceChunked(s: string): { body: string; length: number } | null | undefined {
  let pos = 0;
  let body = "";
  for (;;) {
    const eol = s.indexOf("\r\n", pos);
    if (eol < 0) {
      // Incomplete, unless what is there is already wrong (whatever state an unfinished
      // extension is in, one of "", "a", '"', 'a"' ends it).
      const m = /^([0-9a-fA-F]*)([^\r]*)(\r?)$/.exec(s.slice(pos));
      if (m === null || m[1].replace(/^0+/, "").length > 13) return null;
      if (m[1] === "" && (m[2] !== "" || m[3] !== "")) return null;
      const ends = m[3] === "" ? ["", "a", '"', 'a"'] : [""];
      return ends.some((e) => EXTENSIONS.test(m[2] + e)) ? undefined : null;
    }
    const line = s.slice(pos, eol);
    const m = /^([0-9a-fA-F]+)(.*)$/.exec(line);
    if (m === null || !EXTENSIONS.test(m[2]) || line.length > 4096) return null;
    if (m[1].replace(/^0+/, "").length > 13) return null;
    const size = parseInt(m[1], 16);
    pos = eol + 2;
    if (size === 0) break;
    if (s.length < pos + size + 2) {
      return s.length >= pos + size && !"\r\n".startsWith(s.slice(pos + size)) ? null : undefined;
    }
    body += s.slice(pos, pos + size);
    if (s.slice(pos + size, pos + size + 2) !== "\r\n") return null;
    pos += size + 2;
  }
  let trailers = 0;
  for (;;) {
    const eol = s.indexOf("\r\n", pos);
    if (eol < 0) {
      const rest = s.slice(pos);
      // deno-lint-ignore no-control-regex
      return /^[^\r\n\x00-\x08\x0a-\x1f\x7f]*\r?$/.test(rest) ? undefined : null;
    }
    const line = s.slice(pos, eol);
    pos = eol + 2;
    if (line === "") return { body, length: pos };
    trailers += line.length + 2;
    // deno-lint-ignore no-control-regex
    const ctl = /[\x00-\x08\x0a-\x1f\x7f]/.test(line);
    if (/^[ \t]/.test(line) || line.startsWith(":") || ctl) {
      return null;
    }
    if (trailers > 16384) return null;
  }
}

// -------------------------------------------------------------------------------------------
// The run.

function bytesOf(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** What the parser made of a case, in the reference's shape. */
function parse(g: RequestGen, buf: Uint8Array): Reading | null | undefined {
  // The head arrives in pieces: the scan resumes where it stopped, as the connection does.
  let scan = 0;
  let end = -1;
  for (let have = 0; have < buf.length;) {
    have = Math.min(buf.length, have + 1 + g.int(64));
    const found = findHeadEnd(buf, scan, have);
    if (found >= 0) {
      end = found;
      break;
    }
    scan = ~found;
  }
  if (end < 0) return undefined;
  if (end > MAX_HEAD) return null;
  let head: RequestHead;
  try {
    head = parseRequestHead(buf, 0, end, new RequestHead());
  } catch (err) {
    if (err instanceof HeadError) return null;
    throw err;
  }
  return {
    method: head.method,
    target: head.target,
    fields: head.fields,
    contentLength: head.contentLength,
    chunked: head.chunked,
    keepAlive: head.keepAlive,
    length: head.length,
  };
}

/** The chunked body at `buf[from...]` fed in random pieces. */
function decodeChunked(
  g: Gen,
  buf: Uint8Array,
  from: number,
): { body: string; length: number } | null | undefined {
  const d = new ChunkedDecoder(REQUEST_CHUNKED);
  let body = "";
  let pos = from;
  try {
    while (pos < buf.length && !d.done) {
      const end = Math.min(buf.length, pos + 1 + g.int(40));
      while (pos < end && !d.done) {
        pos = d.decode(buf, pos, end);
        for (let i = d.spanStart; i < d.spanEnd; i++) body += String.fromCharCode(buf[i]);
      }
    }
  } catch (err) {
    if (err instanceof HeadError) return null;
    throw err;
  }
  return d.done ? { body, length: pos - from } : undefined;
}

/** Counts of one run. */
export interface FuzzStats {
  cases: number;
  accepted: number;
  refused: number;
  incomplete: number;
  mutated: number;
}

/** Runs `count` cases from `seed`; throws on the first disagreement, naming the case. */
export function fuzz(seed: number, count: number): FuzzStats {
  const g = new RequestGen(seed);
  const stats: FuzzStats = { cases: 0, accepted: 0, refused: 0, incomplete: 0, mutated: 0 };
  for (let i = 0; i < count; i++) {
    const c = generate(g);
    const buf = bytesOf(c.input);
    const want = reference(c.input);
    const got = parse(g, buf);
    const label = () => `seed ${seed} case ${i}: ${JSON.stringify(c.input.slice(0, 600))}`;
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      throw new Error(
        `${label()}\n  parser:    ${JSON.stringify(got)}\n  reference: ${JSON.stringify(want)}`,
      );
    }
    stats.cases++;
    if (c.mutated) stats.mutated++;
    if (got === undefined) stats.incomplete++;
    else if (got === null) stats.refused++;
    else {
      stats.accepted++;
      if (got.chunked) {
        const rest = c.input.slice(got.length);
        const want = referenceChunked(rest);
        const have = decodeChunked(g, buf, got.length);
        if (JSON.stringify(have) !== JSON.stringify(want)) {
          throw new Error(
            `${label()}\n  chunked:   ${JSON.stringify(have)}\n  reference: ${
              JSON.stringify(want)
            }`,
          );
        }
        if (!c.mutated && have?.body !== c.body) throw new Error(`${label()}: body changed`);
      } else if (!c.mutated && got.contentLength >= 0) {
        const body = c.input.slice(got.length, got.length + got.contentLength);
        if (body !== c.body) throw new Error(`${label()}: body changed`);
      }
    }
    if (!c.mutated && (got === null || got === undefined)) {
      // Generated requests are valid unless they carry over 128 field lines.
      if (!(got === null && c.input.split("\n").length > 130)) {
        throw new Error(`${label()}: a valid request was not accepted`);
      }
    }
  }
  return stats;
}

if (import.meta.main) {
  const count = Number(Deno.args[0] ?? 100_000);
  const seed = Number(Deno.args[1] ?? 1);
  const start = performance.now();
  const stats = fuzz(seed, count);
  const ms = performance.now() - start;
  console.log(JSON.stringify({ seed, ...stats, ms: Math.round(ms) }));
}
