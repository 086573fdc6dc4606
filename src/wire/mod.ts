/**
 * scalwsd's HTTP/1 codec: the wire format that its own front (a client's requests), its
 * HTTP/1.1 client (a member's responses) and its FastCGI client share, written once. Reading:
 * `findHeadEnd`, field-line scanning, the Content-Length grammar, the chunked decoder (strict
 * or lenient). Writing: the chunk framer and the body pump. Tables: status texts, hop-by-hop
 * names. It knows nothing of sockets, pools or error types: each user passes its own.
 *
 * File names say the role: `parse_*` reads bytes in, `write_*` lays bytes out, a table is
 * named for what it holds.
 */

export {
  CommonNames,
  FIELD_BLANK_CR,
  FIELD_FOLDED,
  FIELD_NAME,
  FIELD_NAME_EMPTY,
  FIELD_TOO_MANY,
  FIELD_VALUE_BYTE,
  FIELD_VALUE_CR,
  FieldLines,
  findHeadEnd,
  headText,
  latin1,
  LENGTH_DIFFERENT,
  LENGTH_INVALID,
  LENGTH_TOO_LONG,
  parseContentLength,
  readContentLength,
  sameToken,
  scanFieldLines,
  TCHAR,
  TEXT,
} from "./parse_head.ts";
export { ChunkedDecoder, type ChunkedOptions } from "./parse_chunked.ts";
export { ChunkFramer, FRAME_OVERHEAD } from "./write_chunked.ts";
export {
  type ClientError,
  type PulledBody,
  pumpBody,
  type PumpOptions,
  type Uploading,
} from "./write_body.ts";
export { statusText } from "./status_text.ts";
export { HOP_BY_HOP } from "../base/hop_by_hop.ts";
