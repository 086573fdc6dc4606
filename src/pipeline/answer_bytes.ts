/**
 * The body size of an answer whose handler did not count it (scalwsd's own answers: errors,
 * policies' refusals, error pages, static files): for the access log's `bytes`.
 */
import type { Answer } from "../front/mod.ts";
import { sizeOf } from "../base/mod.ts";

/** Bytes of `a`'s body as sent: 0 for HEAD, 204 and 304. */
export function answerBytes(a: Answer, method: string): number {
  const status = a.status;
  if (method === "HEAD" || status === 204 || status === 304 || (status >= 100 && status < 200)) {
    return 0;
  }
  if (a instanceof Response) {
    const known = sizeOf(a);
    if (known >= 0) return known;
    if (a.body === null) return 0;
    return Number(a.headers.get("content-length")) || 0;
  }
  const body = a.body;
  if (body === null) return 0;
  if (body instanceof Uint8Array) return body.length;
  for (const [name, value] of a.headers) if (name === "content-length") return Number(value) || 0;
  return 0;
}
