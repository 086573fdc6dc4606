/**
 * An answer the front writes without a Web `Response`: status, header pairs and a body of
 * bytes, a stream, or nothing. Handlers that proxy build one directly; any `Response` is
 * written too (a slower path for scalwsd's own small answers and files).
 */

/** Bytes backed by a plain ArrayBuffer. */
export type Bytes = Uint8Array<ArrayBuffer>;

/** A raw connection handed over after a 101 answer, with what its peer sent after the head. */
export interface Upgraded {
  readonly conn: Pick<Deno.Conn, "read" | "write" | "close">;
  readonly leftover: Uint8Array;
}

/**
 * A body pulled chunk by chunk without a stream (a member's body straight from its
 * connection): one `read` at a time; null at the clean end; a rejection when it broke.
 */
export interface PullBody {
  read(): Promise<Uint8Array | null>;
  /** When present: each chunk a view valid only until the next call (nothing copied). */
  readView?(): Promise<Uint8Array | null>;
  cancel(): void;
}

/** A `ReadableStream` over `pull`, for writers that need one (Deno.serve). */
export function pullStream(pull: PullBody): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      const chunk = await pull.read();
      if (chunk === null) c.close();
      else c.enqueue(chunk);
    },
    cancel() {
      pull.cancel();
    },
  }, { highWaterMark: 0 });
}

export class FrontAnswer {
  constructor(
    readonly status: number,
    /** Lower-case names. `content-length` is honoured for streams and HEAD; framing is ours. */
    readonly headers: [string, string][],
    /**
     * A `Uint8Array` that may be a view of a buffer reused after the answer is written, a
     * stream or a `PullBody` of chunks (each written before the next is pulled), or null.
     */
    readonly body: Uint8Array | ReadableStream<Uint8Array> | PullBody | null,
    /** Called once the answer was written (true) or failed (false). */
    readonly onWritten: ((ok: boolean) => void) | null = null,
  ) {}
}

/** What a front request is answered with. */
export type Answer = Response | FrontAnswer;
