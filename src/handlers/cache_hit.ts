/**
 * A stored entry as the answer to a request: the client's own 304 (RFC 9110 13.1), a byte
 * range (14.2, with `If-Range`), a HEAD, or the whole answer. On scalwsd's own front a
 * `FrontAnswer` of the stored pairs and bytes, else a `Response`.
 */
import { NOT_MODIFIED_HEADERS, notModified } from "../cache/conditional.ts";
import type { Entry } from "../cache/entry.ts";
import { parseHttpDate } from "../cache/http_date.ts";
import { parseRange } from "../cache/range.ts";
import { type Answer, FrontAnswer } from "../front/answer.ts";
import type { Exchange } from "../pipeline/exchange.ts";
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

/** The answer from entry `e`, `age` seconds old, with `Cache-Status: status`. */
export function hitAnswer(ex: Exchange, e: Entry, age: number, status: string): Answer {
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
    ex.status = 304;
    ex.bytes = 0;
    if (ex.rawAnswer) return new FrontAnswer(304, headers, null);
    return new Response(null, { status: 304, headers });
  }
  const method = ex.req.method;
  const range = e.status === 200 ? h.get("range") : null;
  if (range === null && method !== "HEAD" && ex.rawAnswer) {
    // The common hit on scalwsd's own front: the stored pairs and bytes, no Web objects.
    const n = e.headers.length;
    const hh = new Array<[string, string]>(n + 2);
    for (let i = 0; i < n; i++) hh[i] = e.headers[i];
    hh[n] = ["age", String(age)];
    hh[n + 1] = ["cache-status", status];
    ex.status = e.status;
    ex.bytes = e.body.length;
    return new FrontAnswer(e.status, hh, e.body.length === 0 ? null : e.body);
  }
  if (range === null && method !== "HEAD") {
    // The common hit: one reused header list, its last two values set for this answer.
    let hh = e.hitHeaders;
    if (hh === null) {
      hh = e.headers.slice();
      hh.push(["age", ""], ["cache-status", ""]);
      e.hitHeaders = hh;
    }
    hh[hh.length - 2][1] = String(age);
    hh[hh.length - 1][1] = status;
    ex.status = e.status;
    ex.bytes = e.body.length;
    return new Response(e.body.length === 0 ? null : e.body, { status: e.status, headers: hh });
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
  ex.status = code;
  if (method === "HEAD") {
    headers.push(["content-length", String(body.length)]);
    ex.bytes = 0;
    if (ex.rawAnswer) return new FrontAnswer(code, headers, null);
    return new Response(null, { status: code, headers });
  }
  ex.bytes = body.length;
  if (ex.rawAnswer) return new FrontAnswer(code, headers, body.length === 0 ? null : body);
  return new Response(body.length === 0 ? null : body, { status: code, headers });
}
