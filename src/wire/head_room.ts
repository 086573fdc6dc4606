/**
 * A body with free bytes before it in its own buffer: whoever writes the answer may put the
 * head there and send head and body in one write without copying the body (a FastCGI page of
 * 58 KB was copied twice, out of the records and then behind the head). The room is claimed
 * once: a body written twice (kept by a cache, say) copies the second time. Not for bodies
 * that are views into anything else.
 */

/** Free bytes before a body from {@linkcode withHeadRoom}: heads up to this size use them. */
export const HEAD_ROOM = 2048;

/** Buffers whose room is still unclaimed. */
const rooms = new WeakSet<ArrayBuffer>();

/** A new zeroed array of `length` bytes with `HEAD_ROOM` free bytes before it. */
export function withHeadRoom(length: number): Uint8Array<ArrayBuffer> {
  const buf = new ArrayBuffer(HEAD_ROOM + length);
  rooms.add(buf);
  return new Uint8Array(buf, HEAD_ROOM, length);
}

/**
 * Claims the room before `body` for a head of `headLength` bytes: the view of head and body
 * together (head bytes undefined until written), or null when `body` is not a whole body from
 * `withHeadRoom`, the head does not fit, or the room was claimed already.
 */
export function claimHeadRoom(body: Uint8Array, headLength: number): Uint8Array | null {
  const buf = body.buffer;
  if (
    body.byteOffset !== HEAD_ROOM || headLength > HEAD_ROOM ||
    body.byteOffset + body.length !== buf.byteLength || !(buf instanceof ArrayBuffer) ||
    !rooms.has(buf)
  ) return null;
  rooms.delete(buf);
  return new Uint8Array(buf, HEAD_ROOM - headLength, headLength + body.length);
}
