/**
 * A body with free bytes before it in its own buffer: whoever writes the answer may put the
 * head there and send head and body in one write without copying the body (a FastCGI page of
 * 58 KB was copied twice, out of the records and then behind the head). The room is claimed
 * once; the writer gives the buffer back once the bytes are written, and the next body reuses
 * it. A fresh 60 KB array cost about 80 us here (new pages: freed ones come back only at the
 * next garbage collection), 9% of scalwsd's CPU per DokuWiki page; copying into a reused one,
 * about 1 us. Only for bodies that may be reused once written (a `FrontAnswer`'s bytes).
 */

/** Free bytes before a body from {@linkcode withHeadRoom}: heads up to this size use them. */
export const HEAD_ROOM = 2048;

/** Body sizes of the reused buffers (larger bodies get a buffer of their own). */
const CLASSES = [65536, 262144];
/** Most buffers kept per class. */
const KEEP = 16;
const free: ArrayBuffer[][] = CLASSES.map(() => []);

/** Buffers whose room is unclaimed, with the length of the body they hold. */
const issued = new WeakMap<ArrayBuffer, number>();

/**
 * An array of `length` bytes with `HEAD_ROOM` free bytes before it, in a reused buffer when one
 * is free. Its content is undefined: the caller fills all of it.
 */
export function withHeadRoom(length: number): Uint8Array<ArrayBuffer> {
  let buf: ArrayBuffer | undefined;
  for (let i = 0; i < CLASSES.length; i++) {
    if (length <= CLASSES[i]) {
      buf = free[i].pop() ?? new ArrayBuffer(HEAD_ROOM + CLASSES[i]);
      break;
    }
  }
  buf ??= new ArrayBuffer(HEAD_ROOM + length);
  issued.set(buf, length);
  return new Uint8Array(buf, HEAD_ROOM, length);
}

/**
 * Claims the room before `body` for a head of `headLength` bytes: the view of head and body
 * together (head bytes undefined until written), or null when `body` is not a whole body from
 * `withHeadRoom`, the head does not fit, or the room was claimed already. The claimer gives the
 * buffer back with {@linkcode giveHeadRoom} once it wrote it (or failed to).
 */
export function claimHeadRoom(body: Uint8Array, headLength: number): Uint8Array | null {
  const buf = body.buffer;
  if (
    body.byteOffset !== HEAD_ROOM || headLength > HEAD_ROOM || !(buf instanceof ArrayBuffer) ||
    issued.get(buf) !== body.length
  ) return null;
  issued.delete(buf);
  return new Uint8Array(buf, HEAD_ROOM - headLength, headLength + body.length);
}

/**
 * Gives back the buffer of a view from `claimHeadRoom` once its bytes were written: the body
 * it held must not be used any more, the next `withHeadRoom` may hand it out again.
 */
export function giveHeadRoom(claimed: Uint8Array): void {
  const buf = claimed.buffer;
  if (!(buf instanceof ArrayBuffer)) return;
  const i = CLASSES.indexOf(buf.byteLength - HEAD_ROOM);
  if (i >= 0 && free[i].length < KEEP) free[i].push(buf);
}
