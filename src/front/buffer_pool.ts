/**
 * Read buffers shared by every connection of the front: a connection takes one when a read
 * brings more than its small idle buffer holds and gives it back when it goes idle again, so
 * 10,000 idle keep-alive connections hold no large buffers at all.
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
