/**
 * The one framer of chunked bodies (RFC 9112 7.1) for what scalwsd sends: a member's response
 * to a client (`front/write_chunked_response.ts`) and a client's request body of unknown length to a
 * member (`http1/write_request_body.ts`). It only lays out bytes in the caller's buffer; the caller
 * writes them. A small chunk goes out with its size line and CRLF in one write (copied); a
 * large one as its size line, then its own bytes uncopied, the CRLF after them owed to the
 * next size line or to the last chunk. It writes no trailers.
 */

const CR = 0x0d;
const LF = 0x0a;

/** Room `ChunkFramer.frame` needs in `out` besides the bytes of a copied chunk. */
export const FRAME_OVERHEAD = 24;

const LAST = new TextEncoder().encode("0\r\n\r\n");
const CRLF_LAST = new TextEncoder().encode("\r\n0\r\n\r\n");

/** Frames one body's chunks, remembering the CRLF a large chunk still owes. */
export class ChunkFramer {
  /** A large chunk's data went out without its CRLF. */
  #owed = false;

  /**
   * Lays out in `out` from 0 the owed CRLF and the size line of `chunk` (non-empty), and when
   * `copy`, the chunk and its CRLF; returns the length. Without `copy` the caller writes
   * `chunk` itself right after. `out` must hold `FRAME_OVERHEAD` bytes, plus the chunk's when
   * copied.
   */
  frame(chunk: Uint8Array, out: Uint8Array, copy: boolean): number {
    let n = 0;
    if (this.#owed) {
      out[n++] = CR;
      out[n++] = LF;
    }
    const size = chunk.length.toString(16);
    for (let i = 0; i < size.length; i++) out[n++] = size.charCodeAt(i);
    out[n++] = CR;
    out[n++] = LF;
    this.#owed = !copy;
    if (!copy) return n;
    out.set(chunk, n);
    n += chunk.length;
    out[n++] = CR;
    out[n++] = LF;
    return n;
  }

  /** The last chunk (no trailers), after the CRLF still owed. */
  last(): Uint8Array {
    return this.#owed ? CRLF_LAST : LAST;
  }
}
