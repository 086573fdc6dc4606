/** Incremental decoder of a chunked response body; extensions skipped, trailers dropped. */

import { malformed } from "./upstream_error.ts";

const S_SIZE = 0; // hex digits of a chunk size
const S_EXT = 1; // after the size: BWS and extensions up to the line end
const S_SIZE_LF = 2; // CR seen after the size line
const S_DATA = 3;
const S_DATA_CR = 4; // the CRLF after chunk data
const S_DATA_LF = 5;
const S_TRAILER = 6; // start of a trailer line (or the final blank line)
const S_TRAILER_LINE = 7;
const S_FINAL_LF = 8;
const S_DONE = 9;

/** Longest accepted chunk-size line, extensions included. */
const MAX_SIZE_LINE = 4096;
/** Most trailer bytes accepted (they are dropped). */
const MAX_TRAILERS = 65536;

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

/**
 * Feed it bytes with `decode`; each call stops after the framing it could consume and reports
 * at most one run of body bytes in `[spanStart, spanEnd)` of the buffer it was given.
 */
export class ChunkedDecoder {
  #state = S_SIZE;
  #size = 0;
  #digits = 0;
  #lineBytes = 0;
  #trailerBytes = 0;
  /** Body bytes of the current chunk not yet reported. */
  remaining = 0;
  spanStart = 0;
  spanEnd = 0;

  /** True once the last chunk and the trailers have been read. */
  get done(): boolean {
    return this.#state === S_DONE;
  }

  /** True while the next bytes are chunk data (the caller may read them directly). */
  get inData(): boolean {
    return this.#state === S_DATA;
  }

  /** Consumes `n` data bytes read outside `decode` (at most `remaining`). */
  consumeData(n: number): void {
    this.remaining -= n;
    if (this.remaining === 0) this.#state = S_DATA_CR;
  }

  /**
   * Consumes `buf[pos, end)` up to and including the next run of data bytes; returns the new
   * position. Throws `UpstreamError` kind `malformed` (phase `body`) on bad framing.
   */
  decode(buf: Uint8Array, pos: number, end: number): number {
    this.spanStart = this.spanEnd = pos;
    while (pos < end) {
      const c = buf[pos];
      switch (this.#state) {
        case S_SIZE: {
          const h = hexValue(c);
          if (h >= 0) {
            // 13 hex digits stay below 2^53; leading zeros do not count.
            if (this.#size > 0 || h > 0) {
              if (++this.#digits > 13) throw malformed("chunk size too large", "body");
            }
            this.#size = this.#size * 16 + h;
            if (++this.#lineBytes > MAX_SIZE_LINE) {
              throw malformed("chunk size line too long", "body");
            }
            pos++;
            break;
          }
          if (this.#lineBytes === 0) throw malformed("invalid chunk size", "body");
          if (c === 0x3b || c === 0x20 || c === 0x09) {
            this.#state = S_EXT;
          } else if (c === 0x0d) {
            this.#state = S_SIZE_LF;
            pos++;
          } else if (c === 0x0a) {
            pos = this.#sizeLineDone(pos + 1);
          } else {
            throw malformed("invalid chunk size", "body");
          }
          break;
        }
        case S_EXT:
          if (c === 0x0d) {
            this.#state = S_SIZE_LF;
          } else if (c === 0x0a) {
            pos = this.#sizeLineDone(pos + 1);
            break;
          } else if ((c < 0x20 && c !== 0x09) || c === 0x7f) {
            throw malformed("invalid chunk extension", "body");
          } else if (++this.#lineBytes > MAX_SIZE_LINE) {
            throw malformed("chunk size line too long", "body");
          }
          pos++;
          break;
        case S_SIZE_LF:
          if (c !== 0x0a) throw malformed("invalid chunk size line ending", "body");
          pos = this.#sizeLineDone(pos + 1);
          break;
        case S_DATA: {
          const n = Math.min(this.remaining, end - pos);
          this.spanStart = pos;
          this.spanEnd = pos + n;
          this.consumeData(n);
          return pos + n;
        }
        case S_DATA_CR:
          if (c === 0x0d) this.#state = S_DATA_LF;
          else if (c === 0x0a) this.#state = S_SIZE;
          else throw malformed("missing CRLF after chunk data", "body");
          pos++;
          break;
        case S_DATA_LF:
          if (c !== 0x0a) throw malformed("missing CRLF after chunk data", "body");
          this.#state = S_SIZE;
          pos++;
          break;
        case S_TRAILER:
          if (c === 0x0a) {
            this.#state = S_DONE;
            return pos + 1;
          }
          if (c === 0x0d) {
            this.#state = S_FINAL_LF;
            pos++;
          } else {
            this.#state = S_TRAILER_LINE;
          }
          break;
        case S_TRAILER_LINE:
          if (++this.#trailerBytes > MAX_TRAILERS) {
            throw malformed("response trailers over 64 KiB", "body");
          }
          if (c === 0x0a) this.#state = S_TRAILER;
          else if (c === 0 || (c === 0x0d && pos + 1 < end && buf[pos + 1] !== 0x0a)) {
            throw malformed("invalid response trailer", "body");
          }
          pos++;
          break;
        case S_FINAL_LF:
          if (c !== 0x0a) throw malformed("invalid end of chunked body", "body");
          this.#state = S_DONE;
          return pos + 1;
        default: // S_DONE: bytes after the body are the caller's business
          return pos;
      }
    }
    return pos;
  }

  #sizeLineDone(pos: number): number {
    this.remaining = this.#size;
    this.#state = this.#size === 0 ? S_TRAILER : S_DATA;
    this.#size = 0;
    this.#digits = 0;
    this.#lineBytes = 0;
    return pos;
  }
}
