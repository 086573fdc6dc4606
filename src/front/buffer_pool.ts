/**
 * Read buffers shared by every connection of the front: a connection takes one when a read
 * brings more than its small idle buffer holds and gives it back when it goes idle again, so
 * 10,000 idle keep-alive connections hold no large buffers at all. The small idle buffers are
 * views carved from 64 KiB slabs: a new connection allocates no `ArrayBuffer` of its own
 * (measured: that allocation and its garbage collection were the largest JavaScript cost of a
 * new connection).
 */

/** Size of a pooled read buffer (16 KiB, as nginx's large client header buffers). */
export const POOLED_SIZE = 16384;
/** Most buffers kept for reuse; more are left to the garbage collector. */
const KEEP = 256;

const free: Uint8Array<ArrayBuffer>[] = [];

/** A pooled buffer of `POOLED_SIZE` bytes (its content is undefined). */
export function takeBuffer(): Uint8Array<ArrayBuffer> {
  return free.pop() ?? new Uint8Array(POOLED_SIZE);
}

/** Returns a buffer from `takeBuffer`; nothing may use it afterwards. */
export function giveBuffer(buf: Uint8Array<ArrayBuffer>): void {
  if (buf.length === POOLED_SIZE && free.length < KEEP) free.push(buf);
}

/** Buffers waiting in the pool (for tests and metrics). */
export function pooledBuffers(): number {
  return free.length;
}

/** Size of the small buffer a connection keeps while idle. */
export const SMALL_SIZE = 1024;
/** Bytes of one slab the small buffers are carved from. */
const SLAB = 65536;
/** Most small buffers kept for reuse (a slab is freed once none of its views is kept). */
const KEEP_SMALL = 4096;

const smallFree: Uint8Array<ArrayBuffer>[] = [];

/** A small buffer of `SMALL_SIZE` bytes, a view of a shared slab (its content is undefined). */
export function takeSmall(): Uint8Array<ArrayBuffer> {
  const b = smallFree.pop();
  if (b !== undefined) return b;
  const slab = new ArrayBuffer(SLAB);
  for (let at = SLAB - SMALL_SIZE; at > 0; at -= SMALL_SIZE) {
    smallFree.push(new Uint8Array(slab, at, SMALL_SIZE));
  }
  return new Uint8Array(slab, 0, SMALL_SIZE);
}

/** Returns a buffer from `takeSmall`; nothing may use it afterwards (no read pending into it). */
export function giveSmall(buf: Uint8Array<ArrayBuffer>): void {
  if (smallFree.length < KEEP_SMALL) smallFree.push(buf);
}

/** Size of a request body buffer: direct reads of an upload go there, 64 KiB at a time. */
export const BODY_SIZE = 65536;
/** Most body buffers kept for reuse. */
const KEEP_BODY = 64;

const bodyFree: Uint8Array<ArrayBuffer>[] = [];

/** A buffer of `BODY_SIZE` bytes for an upload's chunks (its content is undefined). */
export function takeBodyBuffer(): Uint8Array<ArrayBuffer> {
  return bodyFree.pop() ?? new Uint8Array(BODY_SIZE);
}

/** Returns a buffer from `takeBodyBuffer`; nothing may use it afterwards. */
export function giveBodyBuffer(buf: Uint8Array<ArrayBuffer>): void {
  if (bodyFree.length < KEEP_BODY) bodyFree.push(buf);
}
