/**
 * The response head parser. It scans bytes for structure and validity, decodes the head into
 * one string once, and slices names and values out of it: no split, no `Headers`.
 */

import { malformed } from "./upstream_error.ts";

/** Longest accepted response head (status line, fields and the blank line), in bytes. */
export const MAX_HEAD = 65536;
/** Most header lines accepted in one response head. */
export const MAX_HEADER_LINES = 100;

const LF = 0x0a;
const CR = 0x0d;
const SP = 0x20;
const HTAB = 0x09;
const COLON = 0x3a;

/** tchar (RFC 9110 5.6.2): 1 for bytes allowed in a field name. */
const TCHAR = new Uint8Array(256);
/** 1 for bytes allowed in a field value or reason phrase: HTAB, SP, VCHAR, obs-text. */
const TEXT = new Uint8Array(256);
for (let c = 0; c < 256; c++) {
  TEXT[c] = c === HTAB || (c >= 0x20 && c !== 0x7f) ? 1 : 0;
  const alnum = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
  TCHAR[c] = alnum || "!#$%&'*+-.^_`|~".includes(String.fromCharCode(c)) ? 1 : 0;
}

/**
 * Looks for the blank line that ends a head in `buf[from, end)`. Returns the offset just past
 * it, or, when there is none yet, `~resume` (negative) where `resume` is where to scan next.
 * A line may end in CRLF or a bare LF.
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

/** A parsed response head and the framing it declares. */
export class ResponseHead {
  status = 0;
  statusText = "";
  /** Lower-case names; hop-by-hop and Connection-named ones removed unless the status is 101. */
  headers: [string, string][] = [];
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  minor = 1;
  /** Declared Content-Length, -1 when absent. */
  contentLength = -1;
  chunked = false;
  /** The member allows another request on this connection after this response. */
  keepAlive = true;
  /** The member's first `Date`, kept here when `headers` leaves it out (the cache needs it). */
  date: string | null = null;
}

// Offsets of each field line relative to the head start: name start/end, value start/end.
const spans = new Int32Array(MAX_HEADER_LINES * 4);
const upper = new Uint8Array(MAX_HEADER_LINES);
const known: (string | undefined)[] = new Array(MAX_HEADER_LINES).fill(undefined);

/** Frequent response header names; matched on the bytes they are interned, not allocated. */
const COMMON_NAMES = [
  "accept-ranges",
  "access-control-allow-origin",
  "age",
  "cache-control",
  "connection",
  "content-encoding",
  "content-language",
  "content-length",
  "content-security-policy",
  "content-type",
  "date",
  "etag",
  "expires",
  "keep-alive",
  "last-modified",
  "link",
  "location",
  "pragma",
  "referrer-policy",
  "server",
  "set-cookie",
  "strict-transport-security",
  "transfer-encoding",
  "vary",
  "via",
  "x-content-type-options",
  "x-frame-options",
  "x-powered-by",
  "x-request-id",
];
const NAMES_BY_LENGTH: string[][] = [];
for (const name of COMMON_NAMES) (NAMES_BY_LENGTH[name.length] ??= []).push(name);

/** The interned lower-case name for `buf[at, at+len)` if it is a common one. */
function commonName(buf: Uint8Array, at: number, len: number): string | undefined {
  const candidates = NAMES_BY_LENGTH[len];
  if (candidates === undefined) return undefined;
  next: for (const name of candidates) {
    // tchar bytes | 0x20 lower-case letters and leave '-' and digits as they are.
    for (let i = 0; i < len; i++) if ((buf[at + i] | 0x20) !== name.charCodeAt(i)) continue next;
    return name;
  }
  return undefined;
}

/** `value` equals the lower-case ASCII `token`, ignoring case. */
function isToken(value: string, token: string): boolean {
  if (value.length !== token.length) return false;
  for (let i = 0; i < value.length; i++) {
    if ((value.charCodeAt(i) | 0x20) !== token.charCodeAt(i)) return false;
  }
  return true;
}
const utf8 = new TextDecoder();

/** Decodes `buf[start, end)` as latin1 (one char per byte, exactly, unlike TextDecoder's). */
export function latin1(buf: Uint8Array, start: number, end: number): string {
  let s = "";
  for (let at = start; at < end; at += 8192) {
    const part = buf.subarray(at, Math.min(end, at + 8192));
    s += String.fromCharCode.apply(null, part as unknown as number[]);
  }
  return s;
}

/**
 * Parses the complete head in `buf[start, end)` (`end` as returned by `findHeadEnd`). Throws
 * `UpstreamError` kind `malformed` for anything it does not accept.
 */
export function parseResponseHead(buf: Uint8Array, start: number, end: number): ResponseHead {
  if (end - start > MAX_HEAD) throw malformed("response head over 64 KiB");
  // Status line: HTTP/1.x SP 3DIGIT [SP reason] EOL
  let lf = buf.indexOf(LF, start);
  let lineEnd = lf > start && buf[lf - 1] === CR ? lf - 1 : lf;
  if (
    lineEnd - start < 12 || buf[start] !== 0x48 || buf[start + 1] !== 0x54 ||
    buf[start + 2] !== 0x54 || buf[start + 3] !== 0x50 || buf[start + 4] !== 0x2f ||
    buf[start + 5] !== 0x31 || buf[start + 6] !== 0x2e ||
    (buf[start + 7] !== 0x31 && buf[start + 7] !== 0x30) || buf[start + 8] !== SP
  ) {
    throw malformed("invalid status line in response");
  }
  const d0 = buf[start + 9] - 0x30, d1 = buf[start + 10] - 0x30, d2 = buf[start + 11] - 0x30;
  // 100-599 only (RFC 9110 15): a member answering 999 is malformed, and the client gets 502.
  if (d0 < 1 || d0 > 5 || d1 < 0 || d1 > 9 || d2 < 0 || d2 > 9) {
    throw malformed("invalid status code in response");
  }
  let high = 0;
  let reasonStart = start + 12;
  if (lineEnd > reasonStart) {
    if (buf[reasonStart] !== SP) throw malformed("invalid status line in response");
    reasonStart++;
    for (let i = reasonStart; i < lineEnd; i++) {
      const c = buf[i];
      if (TEXT[c] === 0) throw malformed("invalid character in response reason phrase");
      high |= c;
    }
  }
  const statusLineEnd = lineEnd;
  const head = new ResponseHead();
  head.status = d0 * 100 + d1 * 10 + d2;
  head.minor = buf[start + 7] - 0x30;

  // Field lines: validate and record spans; strings come after one decode.
  let count = 0;
  let pos = lf + 1;
  for (;;) {
    lf = buf.indexOf(LF, pos);
    lineEnd = lf > pos && buf[lf - 1] === CR ? lf - 1 : lf;
    if (lineEnd === pos) break; // the blank line
    if (count === MAX_HEADER_LINES) throw malformed("more than 100 header lines in response");
    const first = buf[pos];
    if (first === SP || first === HTAB) throw malformed("obsolete line folding in response");
    let i = pos;
    let up = 0;
    while (i < lineEnd) {
      const c = buf[i];
      if (TCHAR[c] === 0) break;
      up |= c >= 0x41 && c <= 0x5a ? 1 : 0;
      i++;
    }
    if (i === pos || i === lineEnd || buf[i] !== COLON) {
      throw malformed("invalid header line in response");
    }
    const nameEnd = i;
    i++;
    while (i < lineEnd && (buf[i] === SP || buf[i] === HTAB)) i++;
    const valueStart = i;
    let valueEnd = i;
    for (; i < lineEnd; i++) {
      const c = buf[i];
      if (TEXT[c] === 0) throw malformed("invalid character in response header value");
      high |= c;
      if (c !== SP && c !== HTAB) valueEnd = i + 1;
    }
    const k = count * 4;
    spans[k] = pos - start;
    spans[k + 1] = nameEnd - start;
    spans[k + 2] = valueStart - start;
    spans[k + 3] = valueEnd - start;
    upper[count] = up;
    known[count] = commonName(buf, pos, nameEnd - pos);
    count++;
    pos = lf + 1;
  }

  const text = high < 0x80 ? utf8.decode(buf.subarray(start, end)) : latin1(buf, start, end);
  head.statusText = text.slice(reasonStart - start, statusLineEnd - start);
  const keepAll = head.status === 101;
  const headers = head.headers;
  let close = false;
  let keepAliveToken = false;
  let te: string | null = null;
  let named: string[] | null = null;
  for (let h = 0; h < count; h++) {
    const k = h * 4;
    let name = known[h];
    if (name === undefined) {
      name = text.slice(spans[k], spans[k + 1]);
      if (upper[h] === 1) name = name.toLowerCase();
    }
    const value = text.slice(spans[k + 2], spans[k + 3]);
    switch (name) {
      case "content-length": {
        const n = parseContentLength(value);
        if (n < 0 || (head.contentLength >= 0 && n !== head.contentLength)) {
          throw malformed(`invalid or conflicting Content-Length "${value}" in response`);
        }
        head.contentLength = n;
        break;
      }
      case "transfer-encoding":
        te = te === null ? value : te + "," + value;
        if (!keepAll) continue;
        break;
      case "connection":
        if (isToken(value, "keep-alive")) keepAliveToken = true;
        else if (isToken(value, "close")) close = true;
        else {for (const raw of value.split(",")) {
            const token = raw.trim().toLowerCase();
            if (token === "close") close = true;
            else if (token === "keep-alive") keepAliveToken = true;
            else if (token !== "" && !HOP_BY_HOP.has(token)) (named ??= []).push(token);
          }}
        if (!keepAll) continue;
        break;
      case "date":
        head.date ??= value;
        // Like nginx (proxy_hide_header's defaults), the member's Date and Server stay behind;
        // Deno.serve writes its own Date.
        if (!keepAll) continue;
        break;
      case "server":
        if (!keepAll) continue;
        break;
      case "keep-alive":
      case "proxy-connection":
      case "te":
      case "trailer":
      case "upgrade":
        if (!keepAll) continue;
        break;
    }
    headers.push([name, value]);
  }
  if (te !== null) {
    if (!isChunkedOnly(te)) throw malformed(`unsupported Transfer-Encoding "${te}" in response`);
    if (head.contentLength >= 0) {
      throw malformed("both Content-Length and Transfer-Encoding in response");
    }
    head.chunked = true;
  }
  // HTTP/1.0 with Transfer-Encoding: decode, but never reuse the connection (RFC 9112 6.1).
  head.keepAlive = !close && (head.minor === 1 ? true : keepAliveToken && !head.chunked);
  if (named !== null && !keepAll) dropNamed(headers, named);
  return head;
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "close",
]);

function dropNamed(headers: [string, string][], named: string[]): void {
  let w = 0;
  for (let r = 0; r < headers.length; r++) {
    if (!named.includes(headers[r][0])) headers[w++] = headers[r];
  }
  headers.length = w;
}

/** A Content-Length value (a number, or a list of equal numbers), or -1 when invalid. */
export function parseContentLength(value: string): number {
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
      if (++digits > 15) return -1;
    }
    if (digits === 0 || (result >= 0 && n !== result)) return -1;
    result = n;
    while (i < len && isOws(value.charCodeAt(i))) i++;
    if (i === len) return result;
    if (value.charCodeAt(i) !== 0x2c) return -1;
    i++;
  }
}

function isOws(c: number): boolean {
  return c === SP || c === HTAB;
}

function isChunkedOnly(te: string): boolean {
  let codings = 0;
  let chunked = false;
  for (const raw of te.split(",")) {
    const coding = raw.trim().toLowerCase();
    if (coding === "") continue;
    codings++;
    chunked = coding === "chunked";
  }
  return codings === 1 && chunked;
}
