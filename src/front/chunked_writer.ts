/**
 * Frames a body as chunks for the client (RFC 9112 7.1) with as few writes and copies as it
 * can: a small chunk goes out whole (size line, data, CRLF) in one write, copied into a pooled
 * buffer; a large one in two writes, its size line and then its data, never copied, the CRLF
 * after that data going out with the next size line or the last chunk.
 */

import { giveBuffer, POOLED_SIZE, takeBuffer } from "./buffer_pool.ts";

/** The byte stream the chunks go to (a client connection or a test double). */
export interface ChunkSink {
  write(p: Uint8Array): Promise<number>;
}

/** Most chunk bytes copied behind their size line into one write. */
export const COPY_LIMIT = POOLED_SIZE - 32;

async function writeAll(sink: ChunkSink, bytes: Uint8Array): Promise<void> {
  let done = await sink.write(bytes);
  while (done < bytes.length) done += await sink.write(bytes.subarray(done));
}

/** Writes `s` (ASCII) into `buf` from `at`; the new end. */
function ascii(s: string, buf: Uint8Array, at: number): number {
  for (let i = 0; i < s.length; i++) buf[at++] = s.charCodeAt(i);
  return at;
}

export class ChunkedWriter {
  /** A large chunk's data went out without its CRLF. */
  #owed = false;

  constructor(private readonly sink: ChunkSink) {}

  /** Writes one non-empty chunk (an empty one would end the body: it is skipped). */
  async write(chunk: Uint8Array): Promise<void> {
    if (chunk.length === 0) return;
    const out = takeBuffer();
    let n = 0;
    try {
      if (this.#owed) {
        out[n++] = 0x0d;
        out[n++] = 0x0a;
      }
      n = ascii(chunk.length.toString(16), out, n);
      out[n++] = 0x0d;
      out[n++] = 0x0a;
      if (chunk.length <= COPY_LIMIT) {
        out.set(chunk, n);
        n += chunk.length;
        out[n++] = 0x0d;
        out[n++] = 0x0a;
        this.#owed = false;
        await writeAll(this.sink, out.subarray(0, n));
        return;
      }
      this.#owed = true;
      await writeAll(this.sink, out.subarray(0, n));
    } finally {
      giveBuffer(out);
    }
    await writeAll(this.sink, chunk);
  }

  /** Writes the last chunk (no trailers). */
  end(): Promise<void> {
    return writeAll(this.sink, this.#owed ? CRLF_LAST : LAST);
  }
}

const LAST = new TextEncoder().encode("0\r\n\r\n");
const CRLF_LAST = new TextEncoder().encode("\r\n0\r\n\r\n");
