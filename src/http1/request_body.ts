/** Writing request bytes: whole buffers, and pulled bodies with Content-Length or chunked. */

import type { Http1Conn } from "./connection.ts";
import { FRAMING_CHUNKED } from "./request_head.ts";
import type { BodyPull } from "./types.ts";
import { UpstreamError } from "./upstream_error.ts";

/** Bodies up to this size are copied behind the head (or chunk size) and written at once. */
export const COALESCE_LIMIT = 16384;

const LAST_CHUNK = new TextEncoder().encode("0\r\n\r\n");
const CRLF = new TextEncoder().encode("\r\n");

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

function clientError(message: string, cause?: unknown, timeout = false): UpstreamError {
  return new UpstreamError("write", "client", message, false, timeout, cause);
}

/**
 * Sends a pulled request body, each chunk written before the next is pulled (a slow member
 * slows the client down): with `framing` >= 0 exactly that many bytes, else chunked. A failed
 * pull, a wrong length, or a response timeout while waiting for the body reject with kind
 * `client`; socket errors propagate as they are (the caller maps them).
 */
export async function writeStreamBody(
  conn: Http1Conn,
  body: BodyPull,
  framing: number,
): Promise<void> {
  let total = 0;
  let ok = false;
  try {
    for (;;) {
      conn.upload = body;
      let chunk: Uint8Array | null;
      try {
        chunk = await body.read();
      } catch (err) {
        if (conn.timedOut) {
          throw clientError("request body still arriving at the response timeout", err, true);
        }
        throw clientError("reading the request body failed", err);
      }
      conn.upload = null;
      if (conn.timedOut) {
        throw clientError("request body still arriving at the response timeout", undefined, true);
      }
      if (chunk === null) break;
      if (conn.stopUpload) throw clientError("upload stopped: the member has answered");
      // An empty chunk would end a chunked body early.
      if (chunk.length === 0) continue;
      total += chunk.length;
      if (framing === FRAMING_CHUNKED) {
        await writeChunk(conn, chunk);
      } else {
        if (total > framing) {
          throw clientError(`request body longer than its Content-Length ${framing}`);
        }
        await writeAll(conn, chunk);
      }
    }
    if (framing === FRAMING_CHUNKED) await writeAll(conn, LAST_CHUNK);
    else if (total < framing) {
      throw clientError(`request body ended after ${total} of ${framing} bytes`);
    }
    ok = true;
  } finally {
    conn.upload = null;
    if (!ok) body.cancel();
  }
}

/** One chunk: `size CRLF data CRLF`, coalesced into one write when small. */
async function writeChunk(conn: Http1Conn, chunk: Uint8Array): Promise<void> {
  const size = chunk.length.toString(16);
  const out = conn.out;
  if (chunk.length > COALESCE_LIMIT) {
    const n = out.encode(size + "\r\n");
    await writeAll(conn, out.buf.subarray(0, n));
    await writeAll(conn, chunk);
    await writeAll(conn, CRLF);
    return;
  }
  out.ensure(size.length + chunk.length + 4);
  const buf = out.buf;
  let at = 0;
  for (let i = 0; i < size.length; i++) buf[at++] = size.charCodeAt(i);
  buf[at++] = 0x0d;
  buf[at++] = 0x0a;
  buf.set(chunk, at);
  at += chunk.length;
  buf[at++] = 0x0d;
  buf[at++] = 0x0a;
  await writeAll(conn, buf.subarray(0, at));
}
