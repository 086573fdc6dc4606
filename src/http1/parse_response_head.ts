/**
 * The response head parser. It scans bytes for structure and validity, decodes the head into
 * one string once, and slices names and values out of it: no split, no `Headers`.
 */

import {
  CommonNames,
  FIELD_FOLDED,
  FIELD_NAME,
  FIELD_NAME_EMPTY,
  FIELD_TOO_MANY,
  FieldLines,
  headText,
  HOP_BY_HOP,
  lowerCase,
  parseContentLength,
  sameToken,
  scanFieldLines,
  TEXT,
} from "../wire/mod.ts";
import { malformed, type UpstreamError } from "./upstream_error.ts";

/** Longest accepted response head (status line, fields and the blank line), in bytes. */
export const MAX_HEAD = 65536;
/** Most header lines accepted in one response head. */
export const MAX_HEADER_LINES = 100;

const LF = 0x0a;
const CR = 0x0d;
const SP = 0x20;

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

/** The field lines of the head being parsed (one head at a time: parsing never awaits). */
const lines = new FieldLines(MAX_HEADER_LINES);

/** Frequent response header names; matched on the bytes they are interned, not allocated. */
const COMMON_NAMES = new CommonNames([
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
]);

/** `value` equals the lower-case ASCII `token`, ignoring case. */
function isToken(value: string, token: string): boolean {
  return sameToken(value, 0, value.length, token);
}

/** The malformed error for a `scanFieldLines` fault. */
function fieldError(code: number): UpstreamError {
  switch (code) {
    case FIELD_TOO_MANY:
      return malformed("more than 100 header lines in response");
    case FIELD_FOLDED:
      return malformed("obsolete line folding in response");
    case FIELD_NAME_EMPTY:
    case FIELD_NAME:
      return malformed("invalid header line in response");
    default:
      return malformed("invalid character in response header value");
  }
}

/**
 * Parses the complete head in `buf[start, end)` (`end` as returned by `findHeadEnd`). Throws
 * `UpstreamError` kind `malformed` for anything it does not accept.
 */
export function parseResponseHead(buf: Uint8Array, start: number, end: number): ResponseHead {
  if (end - start > MAX_HEAD) throw malformed("response head over 64 KiB");
  // Status line: HTTP/1.x SP 3DIGIT [SP reason] EOL
  const lf = buf.indexOf(LF, start);
  const lineEnd = lf > start && buf[lf - 1] === CR ? lf - 1 : lf;
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

  const head = new ResponseHead();
  head.status = d0 * 100 + d1 * 10 + d2;
  head.minor = buf[start + 7] - 0x30;

  // Field lines: validate and record spans; strings come after one decode.
  const count = scanFieldLines(buf, lf + 1, lines);
  if (count < 0) throw fieldError(count);
  const spans = lines.spans;
  const text = headText(buf, start, end, high | lines.high);
  head.statusText = text.slice(reasonStart - start, lineEnd - start);
  const keepAll = head.status === 101;
  const headers = head.headers;
  let close = false;
  let keepAliveToken = false;
  let te: string | null = null;
  let named: string[] | null = null;
  for (let h = 0; h < count; h++) {
    const k = h * 4;
    const a = spans[k], b = spans[k + 1];
    let name = COMMON_NAMES.find(buf, a, b - a);
    if (name === undefined) {
      name = lowerCase(text.slice(a - start, b - start));
    }
    const value = text.slice(spans[k + 2] - start, spans[k + 3] - start);
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

function dropNamed(headers: [string, string][], named: string[]): void {
  let w = 0;
  for (let r = 0; r < headers.length; r++) {
    if (!named.includes(headers[r][0])) headers[w++] = headers[r];
  }
  headers.length = w;
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
