/**
 * The names of the fields that describe one connection rather than the message (RFC 9110
 * 7.6.1, with the non-standard `Proxy-Connection` and `Keep-Alive`): never passed from one
 * connection to the next. Kept in `base/` because the configuration (which refuses policies
 * that would set them) sits below the HTTP/1 codec; the codec's face (`wire/mod.ts`) offers
 * them to the rest.
 */

/** The connection-specific field names, lower case. */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);
