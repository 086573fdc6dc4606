/** Byte helpers for raw-socket tests: one char per byte, so byte and string offsets agree. */

/** The bytes as a string of one char each (latin1). */
export function latin1(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i += 8192) {
    s += String.fromCharCode(...b.subarray(i, Math.min(b.length, i + 8192)));
  }
  return s;
}

/** The string's chars as bytes (each below 256). */
export function bytesOf(s: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** The parts one after another, in one new array. */
export function concat(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}
