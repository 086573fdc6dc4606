/**
 * What route matching and policies read of a request, in one place, so that they do not
 * depend on how the front delivered it: the method, one header, and the headers as policies
 * edited them. Reads never allocate; the first edit makes an overlay (no copy).
 */
import type { EditedHeaders } from "./edited_headers.ts";
import type { Exchange } from "./exchange.ts";

/** The request method. */
export function requestMethod(ex: Exchange): string {
  return ex.req.method;
}

/** One request header (as edited by earlier policies), or null. `name` is lower case. */
export function requestHeader(ex: Exchange, name: string): string | null {
  return (ex.editedHeaders ?? ex.req.headers).get(name);
}

/** The request headers, editable: an overlay made on the first edit, kept on the exchange. */
export function editHeaders(ex: Exchange): EditedHeaders {
  return ex.editHeaders();
}
