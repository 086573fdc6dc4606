/**
 * Large read buffers lent to streamed member bodies read as views (`BodySource.readView`): a
 * body of a MiB is read in 256 KiB reads, a quarter of the reads (and of the client writes
 * behind them) that 64 KiB took (get-1m: 1,350-1,480 to 800-890 us of CPU per request, measured
 * alternately on this shared machine). A connection borrows one for one body and gives it back
 * at the body's clean end, so idle member connections keep only their 16 KiB buffer.
 *
 * It is not the connection's own read buffer (`member_conn.ts`) and not the front's pools.
 *
 * @module
 */

import type { Bytes } from "./types.ts";

/** Size of a lent buffer: the most one read of a streamed body brings. */
export const VIEW_SIZE = 262144;
/** Most buffers kept for reuse (2 MiB); more go to the garbage collector. */
const KEEP = 8;

const free: Bytes[] = [];

/** A buffer of `VIEW_SIZE` bytes (its content is undefined). */
export function takeView(): Bytes {
  return free.pop() ?? new Uint8Array(VIEW_SIZE);
}

/** Returns a buffer from `takeView`; no read may be pending into it and nothing may use it. */
export function giveView(buf: Bytes): void {
  if (buf.length === VIEW_SIZE && free.length < KEEP) free.push(buf);
}

/** Buffers waiting for reuse (for tests). */
export function freeViews(): number {
  return free.length;
}
