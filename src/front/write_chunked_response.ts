/**
 * Writes a body as chunks to the client (RFC 9112 7.1) with as few writes and copies as it
 * can: the shared framer (`wire/write_chunked.ts`) lays a small chunk out whole (size line,
 * data, CRLF) in a pooled buffer for one write; a large one goes in two writes, its size line
 * and then its data, never copied, the CRLF after that data going out with the next size line
 * or the last chunk.
 */

import { ChunkFramer, FRAME_OVERHEAD } from "../wire/mod.ts";
import { giveBuffer, POOLED_SIZE, takeBuffer } from "./buffer_pool.ts";

/** The byte stream the chunks go to (a client connection or a test double). */
export interface ChunkSink {
  write(p: Uint8Array): Promise<number>;
}

/** Most chunk bytes copied behind their size line into one write. */
export const COPY_LIMIT = POOLED_SIZE - FRAME_OVERHEAD - 8;

async function writeAll(sink: ChunkSink, bytes: Uint8Array): Promise<void> {
  let done = await sink.write(bytes);
  while (done < bytes.length) done += await sink.write(bytes.subarray(done));
}

/** Writes one body's chunks to `sink`, framed by the shared `ChunkFramer`. */
export class ChunkedWriter {
  readonly #framer = new ChunkFramer();

  constructor(private readonly sink: ChunkSink) {}

  /** Writes one non-empty chunk (an empty one would end the body: it is skipped). */
  async write(chunk: Uint8Array): Promise<void> {
    if (chunk.length === 0) return;
    const copy = chunk.length <= COPY_LIMIT;
    const out = takeBuffer();
    try {
      await writeAll(this.sink, out.subarray(0, this.#framer.frame(chunk, out, copy)));
    } finally {
      giveBuffer(out);
    }
    if (!copy) await writeAll(this.sink, chunk);
  }

  /** Writes the last chunk (no trailers). */
  end(): Promise<void> {
    return writeAll(this.sink, this.#framer.last());
  }
}
