/** A `ReadableStream` request body pulled like any other `BodyPull` (HTTP/2 clients, tests). */

import type { BodyPull } from "./types.ts";

function ignore(_err: unknown): void {}

/**
 * Reads `stream` one chunk per `read`; `cancel` cancels the stream, which settles a pending
 * read as the end (the caller tells a cut body apart by why it cancelled).
 */
export class StreamPull implements BodyPull {
  #reader: ReadableStreamDefaultReader<Uint8Array> | null = null;

  constructor(readonly stream: ReadableStream<Uint8Array>) {}

  async read(): Promise<Uint8Array | null> {
    const r = await (this.#reader ??= this.stream.getReader()).read();
    return r.done ? null : r.value;
  }

  cancel(): void {
    (this.#reader ?? this.stream).cancel().catch(ignore);
  }
}

/** `body` as a pull: a stream is wrapped, anything else is returned as it is. */
export function asPull<T>(body: T | ReadableStream<Uint8Array>): T | StreamPull {
  return body instanceof ReadableStream ? new StreamPull(body) : body;
}
