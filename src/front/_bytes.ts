/** Test helpers of the front: strings of one char per byte, and back. */

/** One byte per char (chars above U+00FF are cut to their low byte). */
export function bytes(s: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** One char per byte. */
export function text(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i++) s += String.fromCharCode(b[i]);
  return s;
}
