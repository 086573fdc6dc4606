/**
 * The request head parser of scalwsd's own HTTP/1.1 front: request line, field lines and the
 * framing they declare, read from bytes with no `Headers` and no split. Strict where RFC 9112
 * lets a server refuse: anything that could be read two ways (request smuggling) or that it
 * does not understand is refused with 400 and the connection is closed.
 * The byte-level scanning (field lines, the end of the head) is the shared codec's
 * (`wire/parse_head.ts`); what the fields mean for a server is decided here.
 */

import {
  CommonNames,
  FIELD_BLANK_CR,
  FIELD_FOLDED,
  FIELD_NAME,
  FIELD_NAME_EMPTY,
  FIELD_TOO_MANY,
  FIELD_VALUE_CR,
  FieldLines,
  headText,
  latin1,
  LENGTH_DIFFERENT,
  LENGTH_TOO_LONG,
  ListCursor,
  lowerCase,
  readContentLength,
  sameToken,
  scanFieldLines,
  TCHAR,
} from "../wire/mod.ts";

/** Longest accepted request head (request line, fields and the blank line), in bytes. */
export const MAX_HEAD = 65536;
/** Most field lines accepted in one head, whatever `max_header_count` says. */
export const MAX_FIELD_LINES = 128;

const LF = 0x0a;
const CR = 0x0d;
const SP = 0x20;

/** 1 for bytes allowed in a request target: VCHAR only (hyper refuses obs-text there too). */
const TARGET = new Uint8Array(256);
for (let c = 0; c < 256; c++) TARGET[c] = c > 0x20 && c < 0x7f ? 1 : 0;

/**
 * Why a head was refused; answered with `status` (400, or 431 for more field lines than the
 * front reads) and a close.
 */
export class HeadError extends Error {
  override name = "HeadError";
  constructor(message: string, readonly status = 400) {
    super(message);
  }
}

/** A parsed request head and the framing it declares. */
export class RequestHead {
  method = "";
  /**
   * The target as received, without a fragment: origin-form (`/p?q`), `*`, or the path of an
   * absolute-form one.
   */
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
    name = lowerCase(name);
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
    name = lowerCase(name);
    const f = this.fields;
    for (let i = 0; i < f.length; i += 2) if (f[i] === name) return true;
    return false;
  }

  /** Whether the request carries a body (Content-Length above 0, or chunked). */
  get hasBody(): boolean {
    return this.chunked || this.contentLength > 0;
  }
}

/** Frequent request field names, interned instead of allocated per request. */
const COMMON_NAMES = new CommonNames([
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
]);

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

/** Skips a line end at `p` (CRLF or LF); throws on anything else. */
function lineEnd(buf: Uint8Array, p: number, what: string): number {
  const c = buf[p];
  if (c === LF) return p + 1;
  if (c === CR && buf[p + 1] === LF) return p + 2;
  throw new HeadError(c === CR ? `bare CR in ${what}` : `invalid byte in ${what}`);
}

const C_CLOSE = 1;
const C_KEEP_ALIVE = 2;
const C_UPGRADE = 4;

/** Walks list-valued fields (one at a time: parsing never awaits). */
const items = new ListCursor();

/** The Connection tokens of `value` as bits. */
function connectionTokens(value: string): number {
  let bits = 0;
  items.reset(value);
  while (items.next()) {
    const a = items.from, b = items.to;
    if (sameToken(value, a, b, "close")) bits |= C_CLOSE;
    else if (sameToken(value, a, b, "keep-alive")) bits |= C_KEEP_ALIVE;
    else if (sameToken(value, a, b, "upgrade")) bits |= C_UPGRADE;
  }
  return bits;
}

/** A Content-Length value (a list of equal lengths is one length); throws when invalid. */
function contentLength(value: string): number {
  const n = readContentLength(value);
  if (n >= 0) return n;
  if (n === LENGTH_TOO_LONG) throw new HeadError("Content-Length too large");
  if (n === LENGTH_DIFFERENT) throw new HeadError("different Content-Lengths");
  throw new HeadError("invalid Content-Length");
}

/** Whether the comma-separated `value` names the token `token` (lower-case). */
function listHas(value: string, token: string): boolean {
  items.reset(value);
  while (items.next()) {
    // A protocol may carry a version: `h2c/1`.
    const slash = value.indexOf("/", items.from);
    if (sameToken(value, items.from, slash >= 0 && slash < items.to ? slash : items.to, token)) {
      return true;
    }
  }
  return false;
}

/** The field lines of the head being parsed (one head at a time: parsing never awaits). */
const lines = new FieldLines(MAX_FIELD_LINES);

/** The refusal for a `scanFieldLines` fault. */
function fieldError(code: number): HeadError {
  switch (code) {
    case FIELD_FOLDED:
      return new HeadError("obsolete line folding");
    case FIELD_NAME_EMPTY:
      return new HeadError("empty or invalid field name");
    case FIELD_NAME:
      return new HeadError("invalid field name");
    case FIELD_VALUE_CR:
      return new HeadError("bare CR in a field value");
    case FIELD_BLANK_CR:
      return new HeadError("bare CR in the head");
    case FIELD_TOO_MANY:
      return new HeadError("too many field lines", 431);
    default:
      return new HeadError("invalid byte in a field value");
  }
}

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
  const n = scanFieldLines(buf, p, lines);
  if (n < 0) throw fieldError(n);
  if (lines.end !== end) throw new HeadError("invalid end of head");
  high |= lines.high;
  const spans = lines.spans;

  // One string for the whole head: ASCII decodes fast; other bytes stand for themselves.
  const text = headText(buf, start, end, high);
  head.method = method(buf, start, methodEnd - start);
  let target = text.slice(targetStart - start, targetEnd - start);
  // A fragment is the client's own (RFC 9110 4.2.4): dropped, as Deno.serve did, so that
  // routes, deny_paths and the member all see the path before it.
  const hash = target.indexOf("#");
  if (hash >= 0) target = target.slice(0, hash);
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
    let name = COMMON_NAMES.find(buf, a, b - a);
    if (name === undefined) {
      name = lowerCase(text.slice(a - start, b - start));
    }
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
