/**
 * Random trace and span ids as lower-case hex, from a pool of random bytes refilled 4 KiB at a
 * time (one `crypto.getRandomValues` per 170 traces).
 *
 * @module
 */

const HEX: string[] = [];
for (let i = 0; i < 256; i++) HEX.push((i < 16 ? "0" : "") + i.toString(16));

const POOL = new Uint8Array(4096);
let at = POOL.length;

/** `bytes` random bytes as hex, never all zero (W3C Trace Context forbids it). */
function hex(bytes: number): string {
  for (;;) {
    if (at + bytes > POOL.length) {
      crypto.getRandomValues(POOL);
      at = 0;
    }
    let s = "";
    let any = 0;
    for (let i = at; i < at + bytes; i++) {
      any |= POOL[i];
      s += HEX[POOL[i]];
    }
    at += bytes;
    if (any !== 0) return s;
  }
}

/** A new trace id: 32 hex digits. */
export function newTraceId(): string {
  return hex(16);
}

/** A new span id: 16 hex digits. */
export function newSpanId(): string {
  return hex(8);
}
