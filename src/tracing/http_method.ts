/**
 * The request method as the OpenTelemetry HTTP semantic conventions write it in a span: one of the
 * methods they know (RFC 9110's and PATCH, case-sensitive), or `_OTHER` with the method kept in
 * `http.request.method_original`; the span's name then says `HTTP` (a client could otherwise fill
 * the span names, a low-cardinality field, with made-up methods).
 */

const KNOWN = new Set([
  "CONNECT",
  "DELETE",
  "GET",
  "HEAD",
  "OPTIONS",
  "PATCH",
  "POST",
  "PUT",
  "TRACE",
]);

/** How a span shows one request method. */
export interface SpanMethod {
  /** `http.request.method`: the method, or `_OTHER`. */
  readonly attribute: string;
  /** The method in the span's name: the method, or `HTTP`. */
  readonly name: string;
  /** `http.request.method_original` when `attribute` is `_OTHER`, else undefined. */
  readonly original: string | undefined;
}

/** The {@linkcode SpanMethod} of `method` (as the client sent it). */
export function spanMethod(method: string): SpanMethod {
  if (KNOWN.has(method)) return { attribute: method, name: method, original: undefined };
  return { attribute: "_OTHER", name: "HTTP", original: method };
}
