/** Writing request bytes: whole buffers, and pulled bodies with Content-Length or chunked. */

import { ChunkFramer, FRAME_OVERHEAD, pumpBody } from "../wire/mod.ts";
import type { Http1Conn } from "./member_conn.ts";
import { FRAMING_CHUNKED } from "./write_request_head.ts";
import type { BodyPull } from "./types.ts";
import { clientError } from "./upstream_error.ts";

/** Bodies up to this size are copied behind the head (or chunk size) and written at once. */
export const COALESCE_LIMIT = 16384;

/** Finishes a write that the socket took only in part; counts into `conn.sent`. */
export async function writeRest(conn: Http1Conn, bytes: Uint8Array, done: number): Promise<void> {
  while (done < bytes.length) {
    const n = await conn.socket.write(bytes.subarray(done));
    conn.sent += n;
    done += n;
  }
}

/** Writes all of `bytes`; counts into `conn.sent`. */
export async function writeAll(conn: Http1Conn, bytes: Uint8Array): Promise<void> {
  const n = await conn.socket.write(bytes);
  conn.sent += n;
  if (n < bytes.length) await writeRest(conn, bytes, n);
}

/**
 * Sends a pulled request body through the shared pump (`wire/`), each chunk written before the
 * next is pulled (a slow member slows the client down): with `framing` >= 0 exactly that many
 * bytes, else chunked. A failed pull, a wrong length, or a response timeout while waiting for
 * the body reject with kind `client`; socket errors propagate as they are (the caller maps
 * them).
 */
export async function writeStreamBody(
  conn: Http1Conn,
  body: BodyPull,
  framing: number,
): Promise<void> {
  if (framing !== FRAMING_CHUNKED) {
    await pumpBody(conn, body, { length: framing, write: (c) => writeAll(conn, c), clientError });
    return;
  }
  const framer = new ChunkFramer();
  await pumpBody(conn, body, {
    length: -1,
    write: (c) => writeChunk(conn, framer, c),
    clientError,
  });
  await writeAll(conn, framer.last());
}

/** One chunk: its size line and, when small, its data and CRLF, in one write. */
async function writeChunk(conn: Http1Conn, framer: ChunkFramer, chunk: Uint8Array): Promise<void> {
  const copy = chunk.length <= COALESCE_LIMIT;
  const out = conn.out;
  out.ensure(FRAME_OVERHEAD + (copy ? chunk.length : 0));
  await writeAll(conn, out.buf.subarray(0, framer.frame(chunk, out.buf, copy)));
  if (!copy) await writeAll(conn, chunk);
}
