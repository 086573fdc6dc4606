/**
 * How the front reads a client's chunked request body: the shared decoder (`wire/`) in its
 * strict mode (RFC 9112 7.1: CRLF line ends only, extensions and trailers checked, 16 KiB of
 * trailers). A client's body is the one place a proxy must not guess, so anything else is a
 * `ChunkError` and the connection closes.
 */

import type { ChunkedOptions } from "../wire/mod.ts";
import { HeadError } from "./parse_request_head.ts";

/** Thrown for a malformed chunked body. */
export class ChunkError extends HeadError {
  override name = "ChunkError";
}

/** Options of the request-side `ChunkedDecoder`. */
export const REQUEST_CHUNKED: ChunkedOptions = {
  strict: true,
  maxTrailers: 16384,
  fail: (message) => new ChunkError(message),
};
