/**
 * scalwsd's HTTP/1 codec: the wire format that its own front (a client's requests), its
 * HTTP/1.1 client (a member's responses) and its FastCGI client share, written once. Reading
 * (`parse_head.ts`, `parse_chunked.ts`): `findHeadEnd`, field-line scanning, the
 * Content-Length grammar, the chunked decoder (strict or lenient). Writing (`write_chunked.ts`,
 * `write_body.ts`): the chunk framer and the body pump; a body with room for its head before it
 * (`head_room.ts`). Tables: status texts, hop-by-hop names.
 * It knows nothing of sockets, pools or error types: each user passes its own.
 *
 * File names say the role: `parse_*` reads bytes in, `write_*` lays bytes out, a table is
 * named for what it holds.
 */

export * from "./parse_head.ts";
export * from "./parse_chunked.ts";
export * from "./write_chunked.ts";
export * from "./write_body.ts";
export * from "./status_text.ts";
export { claimHeadRoom, giveHeadRoom, HEAD_ROOM, withHeadRoom } from "./head_room.ts";
export { HOP_BY_HOP } from "../base/mod.ts";
