/**
 * How the HTTP/1 client reads a member's chunked body: the shared decoder (`wire/`) in its
 * lenient mode (a bare LF ends a line too), up to 64 KiB of trailers, failing with
 * `UpstreamError` kind `malformed` in phase `body`.
 */

import type { ChunkedOptions } from "../wire/mod.ts";
import { malformed } from "./upstream_error.ts";

/** Options of the response-side `ChunkedDecoder`. */
export const RESPONSE_CHUNKED: ChunkedOptions = {
  strict: false,
  maxTrailers: 65536,
  fail: (message) => malformed(message, "body"),
};
