/**
 * What route matching and policies read of a request, in one place, so that they do not
 * depend on how the front delivered it: the method, one header, and the headers as policies
 * edited them. Reads never allocate; the first edit copies the headers once.
 */
import type { Exchange } from "./exchange.ts";

/** The request method. */
export function requestMethod(ex: Exchange): string {
  return ex.req.method;
}

/** One request header (as edited by earlier policies), or null. `name` is lower case. */
export function requestHeader(ex: Exchange, name: string): string | null {
  return (ex.editedHeaders ?? ex.req.headers).get(name);
}

/** The request headers, mutable: a copy made on the first edit and kept on the exchange. */
export function editHeaders(ex: Exchange): Headers {
  return ex.editedHeaders ??= copyHeaders(ex);
}

/** A `Headers` copy of the request's fields (the front's parsed head is no `Headers`). */
function copyHeaders(ex: Exchange): Headers {
  const fields = ex.req.headers;
  if (fields instanceof Headers) return new Headers(fields);
  const h = new Headers();
  fields.forEach((value, name) => h.append(name, value));
  return h;
}
