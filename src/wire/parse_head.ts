/**
 * Reading an HTTP/1 head from bytes, the parts both directions share: finding the blank line
 * that ends a head (`findHeadEnd`), scanning and checking its field lines into offsets
 * (`scanFieldLines`, no strings made), the byte classes of RFC 9110, interned common names,
 * one decode of the head's bytes (`latin1`), and the Content-Length grammar. The start line
 * and what the fields mean stay with each side: `front/parse_request_head.ts` (a client's request,
 * strict) and `http1/parse_response_head.ts` (a member's response). Errors come back as codes, so
 * each side throws its own error type with its own words.
 */

const LF = 0x0a;
const CR = 0x0d;
const SP = 0x20;
const HTAB = 0x09;
const COLON = 0x3a;

/** tchar (RFC 9110 5.6.2): 1 for bytes allowed in a method or a field name. */
export const TCHAR = new Uint8Array(256);
/** 1 for bytes allowed in a field value or reason phrase: HTAB, SP, VCHAR, obs-text. */
export const TEXT = new Uint8Array(256);
for (let c = 0; c < 256; c++) {
  TEXT[c] = c === HTAB || (c >= 0x20 && c !== 0x7f) ? 1 : 0;
  const alnum = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
  TCHAR[c] = alnum || "!#$%&'*+-.^_`|~".includes(String.fromCharCode(c)) ? 1 : 0;
}

/**
 * Looks for the blank line that ends a head in `buf[from, end)`. Returns the offset just past
 * it, or, when there is none yet, `~resume` (negative) where `resume` is where to scan next.
 * Lines end in CRLF or (RFC 9112 2.2 lets a recipient accept it) a bare LF.
 */
export function findHeadEnd(buf: Uint8Array, from: number, end: number): number {
  // Nothing to scan: `indexOf` would search the stale rest of the buffer (64 KiB of an earlier
  // body on a connection that carried a large one).
  if (from >= end) return ~Math.max(from, end - 1);
  let pos = from;
  for (;;) {
    const lf = buf.indexOf(LF, pos);
    if (lf < 0 || lf >= end) return ~Math.max(from, end - 1);
    if (lf + 1 >= end) return ~lf;
    const next = buf[lf + 1];
    if (next === LF) return lf + 2;
    if (next === CR) {
      if (lf + 2 >= end) return ~lf;
      if (buf[lf + 2] === LF) return lf + 3;
    }
    pos = lf + 1;
  }
}

/** A field line starts with SP or HTAB (obsolete line folding). */
export const FIELD_FOLDED = -1;
/** A field line starts with a byte that is not a tchar. */
export const FIELD_NAME_EMPTY = -2;
/** A field name is not followed by a colon. */
export const FIELD_NAME = -3;
/** A field value holds a CR that does not end its line. */
export const FIELD_VALUE_CR = -4;
/** A field value holds a control byte. */
export const FIELD_VALUE_BYTE = -5;
/** The blank line is a CR not followed by LF. */
export const FIELD_BLANK_CR = -6;
/** More field lines than `FieldLines.max`. */
export const FIELD_TOO_MANY = -7;

/** Where `scanFieldLines` found each field line: reused from head to head, never reallocated. */
export class FieldLines {
  /** Per line, absolute offsets: name start, name end, value start, value end (OWS trimmed). */
  readonly spans: Int32Array;
  /** Lines found by the last scan. */
  count = 0;
  /** Offset just past the blank line. */
  end = 0;
  /** The OR of every value byte: 0x80 and above means bytes outside ASCII. */
  high = 0;

  constructor(readonly max: number) {
    this.spans = new Int32Array(max * 4);
  }
}

/**
 * Scans the field lines from `p` to the blank line that ends them: `name ":" OWS value OWS`
 * with a tchar name, text bytes in the value, lines ended by CRLF or LF, no folding. Returns
 * the number of lines (recorded in `lines`), or a negative `FIELD_*` code for the first fault.
 * The head must hold its blank line (as `findHeadEnd` found it).
 */
export function scanFieldLines(buf: Uint8Array, p: number, lines: FieldLines): number {
  const spans = lines.spans;
  let n = 0;
  let high = 0;
  for (;;) {
    let c = buf[p];
    if (c === LF) {
      p++;
      break;
    }
    if (c === CR) {
      if (buf[p + 1] !== LF) return FIELD_BLANK_CR;
      p += 2;
      break;
    }
    if (n === lines.max) return FIELD_TOO_MANY;
    if (c === SP || c === HTAB) return FIELD_FOLDED;
    const nameStart = p;
    while (TCHAR[c] === 1) c = buf[++p];
    if (p === nameStart) return FIELD_NAME_EMPTY;
    if (c !== COLON) return FIELD_NAME;
    const nameEnd = p++;
    while (buf[p] === SP || buf[p] === HTAB) p++;
    const valueStart = p;
    let valueEnd = p;
    for (;;) {
      const b = buf[p];
      if (TEXT[b] !== 1) break;
      high |= b;
      p++;
      if (b !== SP && b !== HTAB) valueEnd = p;
    }
    c = buf[p];
    if (c === LF) p++;
    else if (c === CR && buf[p + 1] === LF) p += 2;
    else return c === CR ? FIELD_VALUE_CR : FIELD_VALUE_BYTE;
    const k = n * 4;
    spans[k] = nameStart;
    spans[k + 1] = nameEnd;
    spans[k + 2] = valueStart;
    spans[k + 3] = valueEnd;
    n++;
  }
  lines.count = n;
  lines.end = p;
  lines.high = high;
  return n;
}

/** Frequent field names, matched on the bytes and handed out interned instead of allocated. */
export class CommonNames {
  readonly #byLength: string[][] = [];

  /** `names` in lower case. */
  constructor(names: readonly string[]) {
    for (const name of names) (this.#byLength[name.length] ??= []).push(name);
  }

  /** The interned lower-case name spelled (in any case) by `buf[at, at+len)`, if common. */
  find(buf: Uint8Array, at: number, len: number): string | undefined {
    const candidates = this.#byLength[len];
    if (candidates === undefined) return undefined;
    next: for (const name of candidates) {
      // tchar bytes | 0x20 lower-case letters and leave '-' and digits as they are.
      for (let i = 0; i < len; i++) if ((buf[at + i] | 0x20) !== name.charCodeAt(i)) continue next;
      return name;
    }
    return undefined;
  }
}

/** `name` in lower case; no new string when it is already. */
export function lowerCase(name: string): string {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) return name.toLowerCase();
  }
  return name;
}

/** Decodes `buf[start, end)` as latin1 (one char per byte, exactly, unlike TextDecoder's). */
export function latin1(buf: Uint8Array, start: number, end: number): string {
  let s = "";
  for (let at = start; at < end; at += 8192) {
    const part = buf.subarray(at, Math.min(end, at + 8192));
    s += String.fromCharCode.apply(null, part as unknown as number[]);
  }
  return s;
}

const utf8 = new TextDecoder();

/**
 * The head `buf[start, end)` as one string to slice names and values from: decoded fast when
 * `high` (the OR of its bytes) says it is ASCII, else latin1 so that obs-text bytes stand for
 * themselves.
 */
export function headText(buf: Uint8Array, start: number, end: number, high: number): string {
  return high < 0x80 ? utf8.decode(buf.subarray(start, end)) : latin1(buf, start, end);
}

/** `value[from, to)` equals the lower-case ASCII `token`, ignoring case. */
export function sameToken(value: string, from: number, to: number, token: string): boolean {
  if (to - from !== token.length) return false;
  for (let i = 0; i < token.length; i++) {
    if ((value.charCodeAt(from + i) | 0x20) !== token.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * Walks a comma-separated field value (RFC 9110 5.6.1) element by element, OWS trimmed and
 * empty elements skipped, giving offsets instead of slices: `reset(value)`, then while
 * `next()`, the element is `value[from, to)`.
 */
export class ListCursor {
  from = 0;
  to = 0;
  #value = "";
  #at = 0;

  reset(value: string): this {
    this.#value = value;
    this.#at = 0;
    return this;
  }

  /** Moves to the next non-empty element; false at the end. */
  next(): boolean {
    const v = this.#value;
    while (this.#at <= v.length) {
      let j = v.indexOf(",", this.#at);
      if (j < 0) j = v.length;
      let a = this.#at, b = j;
      this.#at = j + 1;
      while (a < b && isOws(v.charCodeAt(a))) a++;
      while (b > a && isOws(v.charCodeAt(b - 1))) b--;
      if (a === b) continue;
      this.from = a;
      this.to = b;
      return true;
    }
    return false;
  }
}

/** Not a number, or not a list of numbers. */
export const LENGTH_INVALID = -1;
/** A number of more than 15 digits (15 stay exact in a double). */
export const LENGTH_TOO_LONG = -2;
/** A list of numbers that are not all equal. */
export const LENGTH_DIFFERENT = -3;

/**
 * A Content-Length value: a number, or a list of equal numbers (RFC 9110 8.6), OWS around
 * each; else a negative `LENGTH_*` code.
 */
export function readContentLength(value: string): number {
  const len = value.length;
  let result = -1;
  let i = 0;
  for (;;) {
    while (i < len && isOws(value.charCodeAt(i))) i++;
    let n = 0;
    let digits = 0;
    for (; i < len; i++) {
      const c = value.charCodeAt(i);
      if (c < 0x30 || c > 0x39) break;
      n = n * 10 + (c - 0x30);
      if (++digits > 15) return LENGTH_TOO_LONG;
    }
    if (digits === 0) return LENGTH_INVALID;
    if (result >= 0 && n !== result) return LENGTH_DIFFERENT;
    result = n;
    while (i < len && isOws(value.charCodeAt(i))) i++;
    if (i === len) return result;
    if (value.charCodeAt(i) !== 0x2c) return LENGTH_INVALID;
    i++;
  }
}

/** A Content-Length value (a number, or a list of equal numbers), or -1 when invalid. */
export function parseContentLength(value: string): number {
  const n = readContentLength(value);
  return n < 0 ? -1 : n;
}

function isOws(c: number): boolean {
  return c === SP || c === HTAB;
}
