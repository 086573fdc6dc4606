/**
 * The request head parser of scalwsd's own HTTP/1.1 front: request line, field lines and the
 * framing they declare, read from bytes with no `Headers` and no split. Strict where RFC 9112
 * lets a server refuse: anything that could be read two ways (request smuggling) or that it
 * does not understand is refused with 400 and the connection is closed.
 */

/** Longest accepted request head (request line, fields and the blank line), in bytes. */
export const MAX_HEAD = 65536;
/** Most field lines accepted in one head, whatever `max_header_count` says. */
export const MAX_FIELD_LINES = 128;
/** Most digits of a Content-Length: 15 stay exact in a double (2^53 is 16 digits). */
const MAX_LENGTH_DIGITS = 15;

const LF = 0x0a;
const CR = 0x0d;
const SP = 0x20;
const HTAB = 0x09;
const COLON = 0x3a;

/** tchar (RFC 9110 5.6.2): 1 for bytes allowed in a method or a field name. */
const TCHAR = new Uint8Array(256);
/** 1 for bytes allowed in a field value: HTAB, SP, VCHAR, obs-text. */
const TEXT = new Uint8Array(256);
/** 1 for bytes allowed in a request target: VCHAR only (hyper refuses obs-text there too). */
const TARGET = new Uint8Array(256);
for (let c = 0; c < 256; c++) {
  TEXT[c] = c === HTAB || (c >= 0x20 && c !== 0x7f) ? 1 : 0;
  TARGET[c] = c > 0x20 && c < 0x7f ? 1 : 0;
  const alnum = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
  TCHAR[c] = alnum || "!#$%&'*+-.^_`|~".includes(String.fromCharCode(c)) ? 1 : 0;
}

/** Why a head was refused; always answered with 400 and a close. */
export class HeadError extends Error {
  override name = "HeadError";
}

/** A parsed request head and the framing it declares. */
export class RequestHead {
  method = "";
  /** The target as received: origin-form (`/p?q`), `*`, or the path of an absolute-form one. */
  target = "";
  /** The authority of an absolute-form target (`http://a.test/x` gives `a.test`), else "". */
  targetAuthority = "";
  /** 0 for HTTP/1.0, 1 for HTTP/1.1 (and later 1.x). */
  minor = 1;
  /** Field lines in order, flat: lower-case name, value, name, value... */
  fields: string[] = [];
  /** The Host field's value, or null when there is none. */
  host: string | null = null;
  /** Declared Content-Length, -1 when absent. */
  contentLength = -1;
  /** `Transfer-Encoding: chunked`. */
  chunked = false;
  /** The client allows another request after this one. */
  keepAlive = true;
  /** `Expect: 100-continue` (HTTP/1.1 only). */
  expectContinue = false;
  /** The Upgrade value when `Connection` names `upgrade`, else "". */
  upgrade = "";
  /** Field lines, and their bytes as `max_header_size` counts them (name + value + 4 each). */
  fieldCount = 0;
  fieldBytes = 0;
  /** Bytes of the whole head. */
  length = 0;

  /** The value of field `name` (any case), duplicates joined by ", " as `Headers` does. */
  get(name: string): string | null {
    name = lower(name);
    const f = this.fields;
    let out: string | null = null;
    for (let i = 0; i < f.length; i += 2) {
      if (f[i] === name) out = out === null ? f[i + 1] : out + ", " + f[i + 1];
    }
    return out;
  }

  /** Calls `fn(value, name)` per field line, in order (the `Headers.forEach` shape). */
  forEach<T>(fn: (this: T, value: string, name: string) => void, thisArg?: T): void {
    const f = this.fields;
    for (let i = 0; i < f.length; i += 2) fn.call(thisArg as T, f[i + 1], f[i]);
  }

  /** Whether field `name` (any case) is present. */
  has(name: string): boolean {
    name = lower(name);
    const f = this.fields;
    for (let i = 0; i < f.length; i += 2) if (f[i] === name) return true;
    return false;
  }

  /** Whether the request carries a body (Content-Length above 0, or chunked). */
  get hasBody(): boolean {
    return this.chunked || this.contentLength > 0;
  }
}

/** `name` in lower case; no new string when it is already. */
function lower(name: string): string {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) return name.toLowerCase();
  }
  return name;
}

/** Frequent request field names, interned instead of allocated per request. */
const COMMON_NAMES = [
  "accept",
  "accept-encoding",
  "accept-language",
  "authorization",
  "cache-control",
  "connection",
  "content-length",
  "content-type",
  "cookie",
  "expect",
  "host",
  "if-modified-since",
  "if-none-match",
  "keep-alive",
  "origin",
  "pragma",
  "range",
  "referer",
  "sec-websocket-extensions",
  "sec-websocket-key",
  "sec-websocket-protocol",
  "sec-websocket-version",
  "te",
  "transfer-encoding",
  "upgrade",
  "user-agent",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-real-ip",
  "x-request-id",
];
const NAMES_BY_LENGTH: string[][] = [];
for (const name of COMMON_NAMES) (NAMES_BY_LENGTH[name.length] ??= []).push(name);

function commonName(buf: Uint8Array, at: number, len: number): string | undefined {
  const candidates = NAMES_BY_LENGTH[len];
  if (candidates === undefined) return undefined;
  next: for (const name of candidates) {
    // tchar bytes | 0x20 lower-case letters and leave '-' and digits alone.
    for (let i = 0; i < len; i++) if ((buf[at + i] | 0x20) !== name.charCodeAt(i)) continue next;
    return name;
  }
  return undefined;
}

const METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"];

function method(buf: Uint8Array, at: number, len: number): string {
  for (const m of METHODS) {
    if (m.length !== len) continue;
    let i = 0;
    while (i < len && buf[at + i] === m.charCodeAt(i)) i++;
    if (i === len) return m;
  }
  return latin1(buf, at, at + len);
}

function latin1(buf: Uint8Array, from: number, to: number): string {
  let s = "";
  for (let i = from; i < to; i += 4096) {
    s += String.fromCharCode.apply(
      null,
      buf.subarray(i, Math.min(to, i + 4096)) as unknown as number[],
    );
  }
  return s;
}

const ascii = new TextDecoder();

/**
 * Looks for the blank line that ends a head in `buf[from, end)`. Returns the offset just past
 * it, or, when there is none yet, `~resume` (negative) where `resume` is where to scan next.
 * Lines end in CRLF or (RFC 9112 2.2 lets a recipient accept it) a bare LF.
 */
export function findHeadEnd(buf: Uint8Array, from: number, end: number): number {
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

/** Skips a line end at `p` (CRLF or LF); throws on anything else. */
function lineEnd(buf: Uint8Array, p: number, what: string): number {
  const c = buf[p];
  if (c === LF) return p + 1;
  if (c === CR && buf[p + 1] === LF) return p + 2;
  throw new HeadError(c === CR ? `bare CR in ${what}` : `invalid byte in ${what}`);
}

/** `value` equals lower-case ASCII `token`, ignoring case. */
function sameToken(value: string, from: number, to: number, token: string): boolean {
  if (to - from !== token.length) return false;
  for (let i = 0; i < token.length; i++) {
    if ((value.charCodeAt(from + i) | 0x20) !== token.charCodeAt(i)) return false;
  }
  return true;
}

const C_CLOSE = 1;
const C_KEEP_ALIVE = 2;
const C_UPGRADE = 4;

/** The Connection tokens of `value` as bits. */
function connectionTokens(value: string): number {
  let bits = 0;
  let i = 0;
  while (i <= value.length) {
    let j = value.indexOf(",", i);
    if (j < 0) j = value.length;
    let a = i, b = j;
    while (a < b && (value.charCodeAt(a) === SP || value.charCodeAt(a) === HTAB)) a++;
    while (b > a && (value.charCodeAt(b - 1) === SP || value.charCodeAt(b - 1) === HTAB)) b--;
    if (sameToken(value, a, b, "close")) bits |= C_CLOSE;
    else if (sameToken(value, a, b, "keep-alive")) bits |= C_KEEP_ALIVE;
    else if (sameToken(value, a, b, "upgrade")) bits |= C_UPGRADE;
    i = j + 1;
  }
  return bits;
}

/** A Content-Length value (a list of equal lengths is one length); throws when invalid. */
function contentLength(value: string): number {
  let n = -1;
  let i = 0;
  for (;;) {
    while (i < value.length && (value.charCodeAt(i) === SP || value.charCodeAt(i) === HTAB)) i++;
    const from = i;
    let v = 0;
    while (i < value.length) {
      const d = value.charCodeAt(i) - 0x30;
      if (d < 0 || d > 9) break;
      v = v * 10 + d;
      i++;
    }
    if (i === from) throw new HeadError("invalid Content-Length");
    if (i - from > MAX_LENGTH_DIGITS) throw new HeadError("Content-Length too large");
    if (n >= 0 && v !== n) throw new HeadError("different Content-Lengths");
    n = v;
    while (i < value.length && (value.charCodeAt(i) === SP || value.charCodeAt(i) === HTAB)) i++;
    if (i === value.length) return n;
    if (value.charCodeAt(i) !== 0x2c) throw new HeadError("invalid Content-Length");
    i++;
  }
}

/** Whether the comma-separated `value` names the token `token` (lower-case). */
function listHas(value: string, token: string): boolean {
  let i = 0;
  while (i <= value.length) {
    let j = value.indexOf(",", i);
    if (j < 0) j = value.length;
    let a = i, b = j;
    while (a < b && (value.charCodeAt(a) === SP || value.charCodeAt(a) === HTAB)) a++;
    while (b > a && (value.charCodeAt(b - 1) === SP || value.charCodeAt(b - 1) === HTAB)) b--;
    // A protocol may carry a version: `h2c/1`.
    const slash = value.indexOf("/", a);
    if (sameToken(value, a, slash >= 0 && slash < b ? slash : b, token)) return true;
    i = j + 1;
  }
  return false;
}

// Field line spans relative to the head start: name start, name end, value start, value end.
const spans = new Int32Array(MAX_FIELD_LINES * 4);

/**
 * Parses the complete head `buf[start, end)` (`end` just past its blank line, as
 * `findHeadEnd` gives it) into `head`. Throws `HeadError` for anything refused.
 */
export function parseRequestHead(
  buf: Uint8Array,
  start: number,
  end: number,
  head: RequestHead,
): RequestHead {
  head.length = end - start;
  // Request line: method SP target SP HTTP/1.x
  let p = start;
  while (TCHAR[buf[p]] === 1) p++;
  if (p === start || buf[p] !== SP) throw new HeadError("invalid request line");
  const methodEnd = p;
  const targetStart = ++p;
  let high = 0;
  while (TARGET[buf[p]] === 1) high |= buf[p++];
  if (p === targetStart || buf[p] !== SP) throw new HeadError("invalid request target");
  const targetEnd = p++;
  if (
    buf[p] !== 0x48 || buf[p + 1] !== 0x54 || buf[p + 2] !== 0x54 || buf[p + 3] !== 0x50 ||
    buf[p + 4] !== 0x2f || buf[p + 5] !== 0x31 || buf[p + 6] !== 0x2e ||
    buf[p + 7] < 0x30 || buf[p + 7] > 0x39
  ) {
    throw new HeadError("unsupported protocol version");
  }
  head.minor = buf[p + 7] === 0x30 ? 0 : 1;
  p = lineEnd(buf, p + 8, "the request line");

  // Field lines: scanned and checked first, decoded once after.
  let n = 0;
  for (;;) {
    const c = buf[p];
    if (c === LF) {
      p++;
      break;
    }
    if (c === CR) {
      p = lineEnd(buf, p, "the head");
      break;
    }
    if (c === SP || c === HTAB) throw new HeadError("obsolete line folding");
    const nameStart = p;
    while (TCHAR[buf[p]] === 1) p++;
    if (p === nameStart) throw new HeadError("empty or invalid field name");
    if (buf[p] !== COLON) throw new HeadError("invalid field name");
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
    p = lineEnd(buf, p, "a field value");
    if (n === MAX_FIELD_LINES) throw new HeadError("too many field lines");
    const k = n * 4;
    spans[k] = nameStart;
    spans[k + 1] = nameEnd;
    spans[k + 2] = valueStart;
    spans[k + 3] = valueEnd;
    n++;
  }
  if (p !== end) throw new HeadError("invalid end of head");

  // One string for the whole head: ASCII decodes fast; other bytes stand for themselves.
  const text = high < 0x80 ? ascii.decode(buf.subarray(start, end)) : latin1(buf, start, end);
  head.method = method(buf, start, methodEnd - start);
  let target = text.slice(targetStart - start, targetEnd - start);
  if (target.charCodeAt(0) !== 0x2f) target = absoluteTarget(target, head);
  head.target = target;

  const fields = head.fields;
  fields.length = 0;
  let bytes = 0;
  let te = false;
  let conn = 0;
  let upgrade: string | null = null;
  for (let i = 0; i < n; i++) {
    const k = i * 4;
    const a = spans[k], b = spans[k + 1];
    const name = commonName(buf, a, b - a) ?? text.slice(a - start, b - start).toLowerCase();
    const value = text.slice(spans[k + 2] - start, spans[k + 3] - start);
    fields.push(name, value);
    bytes += name.length + value.length + 4;
    switch (name) {
      case "host":
        if (head.host !== null) throw new HeadError("two Host fields");
        head.host = value;
        break;
      case "content-length": {
        const v = contentLength(value);
        if (head.contentLength >= 0 && head.contentLength !== v) {
          throw new HeadError("different Content-Lengths");
        }
        head.contentLength = v;
        break;
      }
      case "transfer-encoding":
        if (te) throw new HeadError("two Transfer-Encoding fields");
        te = true;
        if (!sameToken(value, 0, value.length, "chunked")) {
          throw new HeadError("Transfer-Encoding other than chunked");
        }
        head.chunked = true;
        break;
      case "connection":
        conn |= connectionTokens(value);
        break;
      case "upgrade":
        upgrade = upgrade === null ? value : upgrade + ", " + value;
        break;
      case "expect":
        if (head.minor === 1 && sameToken(value, 0, value.length, "100-continue")) {
          head.expectContinue = true;
        }
        break;
    }
  }
  head.fieldCount = n;
  head.fieldBytes = bytes;
  if (head.chunked) {
    if (head.contentLength >= 0) throw new HeadError("Content-Length with Transfer-Encoding");
    if (head.minor === 0) throw new HeadError("Transfer-Encoding in HTTP/1.0");
  }
  if (upgrade !== null) {
    if (listHas(upgrade, "h2c")) throw new HeadError("h2c upgrade refused");
    if ((conn & C_UPGRADE) !== 0) head.upgrade = upgrade;
  }
  head.keepAlive = (conn & C_CLOSE) === 0 && (head.minor === 1 || (conn & C_KEEP_ALIVE) !== 0);
  return head;
}

/**
 * An absolute-form target (`http://host/path`) gives its authority and path; `*` stands alone
 * (OPTIONS). Anything else (authority-form for CONNECT included) is refused.
 */
function absoluteTarget(target: string, head: RequestHead): string {
  if (target === "*") {
    if (head.method !== "OPTIONS") throw new HeadError("* target without OPTIONS");
    return target;
  }
  let rest: string;
  const lower = target.slice(0, 8).toLowerCase();
  if (lower.startsWith("http://")) rest = target.slice(7);
  else if (lower.startsWith("https://")) rest = target.slice(8);
  else throw new HeadError("invalid request target");
  let slash = rest.length;
  for (let i = 0; i < rest.length; i++) {
    const c = rest.charCodeAt(i);
    if (c === 0x2f || c === 0x3f) {
      slash = i;
      break;
    }
  }
  const authority = rest.slice(0, slash);
  if (authority.length === 0 || authority.indexOf("@") >= 0) {
    throw new HeadError("invalid request target");
  }
  head.targetAuthority = authority;
  const path = rest.slice(slash);
  return path.length === 0 ? "/" : path.charCodeAt(0) === 0x3f ? "/" + path : path;
}
