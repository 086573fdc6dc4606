/**
 * A stored entry as the answer to a request: the client's own 304 (RFC 9110 13.1), a byte
 * range (14.2, with `If-Range`), a HEAD, or the whole answer, made in the form of the front
 * that serves the request (`ex.answer`: on scalwsd's own front the stored pairs and bytes).
 */
import {
  type Entry,
  NOT_MODIFIED_HEADERS,
  notModified,
  parseHttpDate,
  parseRange,
} from "../cache/mod.ts";
import type { Answer } from "../front/mod.ts";
import type { Exchange } from "../pipeline/mod.ts";
import { EMPTY } from "./cache_answers.ts";

/** `If-Range` (RFC 9110 13.1.5): a strong ETag or the exact Last-Modified date. */
function rangeApplies(ifRange: string | null, e: Entry): boolean {
  if (ifRange === null) return true;
  const v = ifRange.trim();
  if (v.startsWith('"')) return e.etag !== null && !e.etag.startsWith("W/") && e.etag === v;
  if (v.startsWith("W/")) return false;
  return e.lastModified !== null && parseHttpDate(v) === parseHttpDate(e.lastModified);
}

/**
 * The stored `Date`, else the second the answer was received (RFC 9111 4.3.2: what a client's
 * `If-Modified-Since` is compared with when the entry has no `Last-Modified`).
 */
function storedDate(e: Entry): number {
  return Number.isNaN(e.dateValue) ? Math.floor(e.responseTime / 1000) * 1000 : e.dateValue;
}

/**
 * The answer from entry `e`, `age` seconds old, with `Cache-Status: status`; `onWritten` is told
 * once it was written (scalwsd's own front only).
 */
export function hitAnswer(
  ex: Exchange,
  e: Entry,
  age: number,
  status: string,
  onWritten: ((ok: boolean) => void) | null = null,
): Answer {
  const h = ex.req.headers;
  const inm = h.get("if-none-match");
  const ims = inm === null ? h.get("if-modified-since") : null;
  if (
    (inm !== null || ims !== null) && e.status === 200 &&
    notModified({ ifNoneMatch: inm, ifModifiedSince: ims }, e.etag, e.lastModified, storedDate(e))
  ) {
    const headers: [string, string][] = [];
    for (const f of e.headers) if (NOT_MODIFIED_HEADERS.has(f[0])) headers.push(f);
    headers.push(["age", String(age)], ["cache-status", status]);
    ex.answered(304, 0);
    return ex.answer(304, headers, null, onWritten);
  }
  const method = ex.req.method;
  const range = e.status === 200 ? h.get("range") : null;
  if (range === null && method !== "HEAD") {
    // The common hit: the stored pairs and bytes.
    const n = e.headers.length;
    const hh = new Array<[string, string]>(n + 2);
    for (let i = 0; i < n; i++) hh[i] = e.headers[i];
    hh[n] = ["age", String(age)];
    hh[n + 1] = ["cache-status", status];
    ex.answered(e.status, e.body.length);
    return ex.answer(e.status, hh, e.body.length === 0 ? null : e.body, onWritten);
  }
  const headers = e.headers.slice();
  headers.push(["age", String(age)], ["cache-status", status]);
  let body = e.body;
  let code = e.status;
  if (range !== null) {
    if (rangeApplies(h.get("if-range"), e)) {
      const br = parseRange(range, body.length);
      if (br === "unsatisfiable") {
        headers.push(["content-range", `bytes */${body.length}`]);
        body = EMPTY;
        code = 416;
      } else if (br !== null) {
        headers.push(["content-range", `bytes ${br.start}-${br.end}/${body.length}`]);
        body = body.subarray(br.start, br.end + 1);
        code = 206;
      }
    }
  }
  ex.answered(code);
  if (method === "HEAD") {
    headers.push(["content-length", String(body.length)]);
    ex.sent(0);
    return ex.answer(code, headers, null, onWritten);
  }
  ex.sent(body.length);
  return ex.answer(code, headers, body.length === 0 ? null : body, onWritten);
}
