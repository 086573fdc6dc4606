/**
 * The chunked decoder (`src/wire/`) fed as a socket would feed it, for the unit tests of both
 * its users (the front's strict request mode, the member client's response mode): a body in
 * pieces of `step` bytes.
 */
import { ChunkedDecoder, type ChunkedOptions } from "../../src/wire/mod.ts";
import { bytesOf } from "./bytes.ts";

/**
 * Decodes `input` (one char per byte) with `options`, fed `step` bytes at a time: the body,
 * the position after the body and whether it ended; throws what the decoder throws.
 */
export function decodeChunked(
  options: ChunkedOptions,
  input: string,
  step = Infinity,
): { body: string; rest: number; done: boolean } {
  const buf = bytesOf(input);
  const d = new ChunkedDecoder(options);
  let body = "";
  let pos = 0;
  while (pos < buf.length && !d.done) {
    const end = Math.min(buf.length, pos + step);
    while (pos < end && !d.done) {
      pos = d.decode(buf, pos, end);
      for (let i = d.spanStart; i < d.spanEnd; i++) body += String.fromCharCode(buf[i]);
    }
  }
  return { body, rest: pos, done: d.done };
}
