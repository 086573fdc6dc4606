/**
 * The CGI header block at the start of FCGI_STDOUT (RFC 3875 section 6): `Name: value` lines
 * ended by LF or CRLF, then an empty line. `Status:` sets the status, a `Location:` without it
 * means 302; otherwise 200.
 */

import { HOP_BY_HOP } from "../wire/mod.ts";
import { malformed } from "../http1/mod.ts";

/** Largest header block accepted (bytes up to and including the empty line). */
export const MAX_CGI_HEAD = 65536;

/** What the CGI head says. */
export interface CgiHead {
  status: number;
  statusText: string;
  /** Names lower-case, in received order, repeated names kept apart. */
  headers: [string, string][];
  /** `Content-Length` when the application sent a valid one, else -1. */
  contentLength: number;
}

/** Headers that belong to a connection, not to the response: never passed on. */
const DROPPED = new Set([...HOP_BY_HOP, "status"]);

/**
 * Index just after the empty line that ends the head in `buf[from, end)`, or `~scan` (a
 * negative number) where the next search may resume. `from` must be the block's `start` or
 * a resume point returned earlier.
 */
export function findCgiHeadEnd(buf: Uint8Array, from: number, end: number, start = 0): number {
  let i = from;
  for (;;) {
    const lf = buf.indexOf(0x0a, i);
    if (lf < 0 || lf >= end) return ~(end > from ? end - 1 : from);
    // An empty line: LF right after the block start or after another LF (with an optional CR).
    if (
      lf === start || buf[lf - 1] === 0x0a ||
      (buf[lf - 1] === 0x0d && (lf === start + 1 || buf[lf - 2] === 0x0a))
    ) {
      return lf + 1;
    }
    i = lf + 1;
  }
}

const TCHAR = (() => {
  const t = new Uint8Array(128);
  const s = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  for (let i = 0; i < s.length; i++) t[s.charCodeAt(i)] = 1;
  return t;
})();

function latin1(buf: Uint8Array, from: number, to: number): string {
  let s = "";
  for (let i = from; i < to; i++) s += String.fromCharCode(buf[i]);
  return s;
}

/**
 * Parses the head in `buf[start, end)` (`end` from `findCgiHeadEnd`). Throws a malformed
 * `UpstreamError` for anything it does not understand: a line without a colon, a bad name, a
 * folded line, control characters, a bad `Status`, an empty head.
 */
export function parseCgiHead(buf: Uint8Array, start: number, end: number): CgiHead {
  const headers: [string, string][] = [];
  let status = 0;
  let statusText = "";
  let location = false;
  let contentLength = -1;
  let pos = start;
  for (;;) {
    const lf = buf.indexOf(0x0a, pos);
    if (lf < 0 || lf >= end) throw malformed("CGI header block not terminated");
    const lineEnd = lf > pos && buf[lf - 1] === 0x0d ? lf - 1 : lf;
    if (lineEnd === pos) break; // the empty line
    let colon = pos;
    while (colon < lineEnd && buf[colon] !== 0x3a) {
      const c = buf[colon];
      if (c >= 128 || TCHAR[c] === 0) throw malformed("invalid header name from the application");
      colon++;
    }
    if (colon === lineEnd || colon === pos) {
      throw malformed("header line without a name and colon from the application");
    }
    let vs = colon + 1;
    let ve = lineEnd;
    while (vs < ve && (buf[vs] === 0x20 || buf[vs] === 0x09)) vs++;
    while (ve > vs && (buf[ve - 1] === 0x20 || buf[ve - 1] === 0x09)) ve--;
    for (let i = vs; i < ve; i++) {
      const c = buf[i];
      if ((c < 0x20 && c !== 0x09) || c === 0x7f) {
        throw malformed("control character in a header value from the application");
      }
    }
    const name = latin1(buf, pos, colon).toLowerCase();
    const value = latin1(buf, vs, ve);
    if (name === "status") {
      if (status !== 0) throw malformed("two Status headers from the application");
      const m = /^([1-5][0-9][0-9])(?: (.*))?$/.exec(value);
      if (m === null) throw malformed(`invalid Status "${value}" from the application`);
      status = Number(m[1]);
      statusText = m[2] ?? "";
      if (status < 200) throw malformed(`interim Status ${status} from the application`);
    } else if (!DROPPED.has(name)) {
      if (name === "location") location = true;
      if (name === "content-length") {
        if (
          !/^[0-9]{1,15}$/.test(value) || (contentLength >= 0 && Number(value) !== contentLength)
        ) {
          throw malformed("invalid Content-Length from the application");
        }
        contentLength = Number(value);
      }
      headers.push([name, value]);
    }
    pos = lf + 1;
  }
  if (headers.length === 0 && status === 0) throw malformed("empty CGI header block");
  if (status === 0) status = location ? 302 : 200;
  return { status, statusText, headers, contentLength };
}
