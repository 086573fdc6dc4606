/**
 * Random trace and span ids as lower-case hex: slices of one flat string of random hex digits,
 * refilled from `crypto.getRandomValues` 4 KiB at a time (one refill per 170 traces). A slice
 * of a flat string is one small object: no concatenation per id.
 *
 * @module
 */

const HEX: string[] = [];
for (let i = 0; i < 256; i++) HEX.push((i < 16 ? "0" : "") + i.toString(16));

const BYTES = new Uint8Array(4096);
let pool = "";
let at = 0;

const ZERO_32 = "0".repeat(32);
const ZERO_16 = "0".repeat(16);

function refill(): void {
  crypto.getRandomValues(BYTES);
  const parts: string[] = new Array(BYTES.length);
  for (let i = 0; i < BYTES.length; i++) parts[i] = HEX[BYTES[i]];
  pool = parts.join("");
  at = 0;
}

/** `digits` random hex digits, never all zero (W3C Trace Context forbids it). */
function hex(digits: number, zero: string): string {
  for (;;) {
    if (at + digits > pool.length) refill();
    const id = pool.slice(at, at + digits);
    at += digits;
    if (id !== zero) return id;
  }
}

/** A new trace id: 32 hex digits. */
export function newTraceId(): string {
  return hex(32, ZERO_32);
}

/** A new span id: 16 hex digits. */
export function newSpanId(): string {
  return hex(16, ZERO_16);
}
