/**
 * Request ids: the id a trusted proxy sent in the request id header (`server.request_id.header`,
 * default `X-Request-Id`), else one made here. A made id is 32 hex digits like nginx's
 * `$request_id`: 20 random per process, then a 48-bit counter; no randomness per request.
 * The header name is the server's (one per process, set when a generation is built), not a
 * route's.
 */

let header = "X-Request-Id";
let lower = "x-request-id";

/** Sets the header name (`server.request_id.header`). */
export function setRequestIdHeader(name: string): void {
  header = name;
  lower = name.toLowerCase();
}

/** The header name as configured (what members get). */
export function requestIdHeader(): string {
  return header;
}

/** The header name in lower case (to find and drop the client's own). */
export function requestIdHeaderLower(): string {
  return lower;
}

const prefix = Array.from(
  crypto.getRandomValues(new Uint8Array(10)),
  (b) => b.toString(16).padStart(2, "0"),
).join("");
let counter = 0;

/** A new id: unique in this process, random across processes. */
export function newRequestId(): string {
  counter++;
  return prefix + counter.toString(16).padStart(12, "0");
}

/** Longest id kept from a trusted proxy; longer ones (or ones with odd bytes) are replaced. */
const MAX_KEPT = 200;

/** Whether a trusted proxy's id may be kept: printable ASCII without spaces, at most 200. */
export function keepable(id: string): boolean {
  if (id.length === 0 || id.length > MAX_KEPT) return false;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}
