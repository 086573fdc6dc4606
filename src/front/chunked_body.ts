/**
 * Strict incremental decoder of a chunked request body (RFC 9112 7.1): hex sizes without sign,
 * prefix or overflow, extensions checked and skipped, CRLF line ends only, trailers checked and
 * dropped. A client's body is the one place a proxy must not guess, so anything else is an
 * error and the connection closes.
 */

import { HeadError } from "./request_head.ts";

const S_SIZE = 0; // hex digits of a chunk size
const S_EXT = 1; // after the size: BWS and extensions up to CR
const S_SIZE_LF = 2; // CR seen after the size line
const S_DATA = 3;
const S_DATA_CR = 4; // the CRLF after chunk data
const S_DATA_LF = 5;
const S_TRAILER = 6; // start of a trailer line (or the final blank line)
const S_TRAILER_LINE = 7;
const S_TRAILER_LF = 8;
const S_FINAL_LF = 9;
const S_DONE = 10;

/** Longest accepted chunk-size line, extensions included. */
const MAX_SIZE_LINE = 4096;
/** Most trailer bytes accepted (they are dropped). */
const MAX_TRAILERS = 16384;
/** Most hex digits of a chunk size after leading zeros (13 stay below 2^53). */
const MAX_DIGITS = 13;

const CR = 0x0d;
const LF = 0x0a;

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

/** 1 for bytes allowed in chunk extensions: tchar, `=`, `;`, `"`, `\`, SP, HTAB, VCHAR, obs-text. */
const EXT = new Uint8Array(256);
/** 1 for bytes allowed in a trailer line. */
const LINE = new Uint8Array(256);
for (let c = 0; c < 256; c++) {
  EXT[c] = c === 0x09 || (c >= 0x20 && c !== 0x7f) ? 1 : 0;
  LINE[c] = EXT[c];
}

/** Thrown for a malformed chunked body. */
export class ChunkError extends HeadError {
  override name = "ChunkError";
}

/**
 * Feed it bytes with `decode`; each call stops after the framing it could consume and reports
 * at most one run of body bytes in `[spanStart, spanEnd)` of the buffer it was given.
 */
export class ChunkedBody {
  #state = S_SIZE;
  #size = 0;
  #digits = 0;
  #lineBytes = 0;
  #trailerBytes = 0;
  /** Bytes of the current line of the trailer section. */
  #trailerLine = 0;
  /** Body bytes of the current chunk not yet reported. */
  remaining = 0;
  spanStart = 0;
  spanEnd = 0;
  /** Body bytes reported so far. */
  total = 0;

  /** True once the last chunk and the trailers have been read. */
  get done(): boolean {
    return this.#state === S_DONE;
  }

  /**
   * Consumes `buf[pos, end)` up to and including the next run of data bytes; returns the new
   * position. Throws `ChunkError` on bad framing.
   */
  decode(buf: Uint8Array, pos: number, end: number): number {
    this.spanStart = this.spanEnd = pos;
    while (pos < end) {
      const c = buf[pos];
      switch (this.#state) {
        case S_SIZE: {
          const h = hexValue(c);
          if (h >= 0) {
            if (this.#size > 0 || h > 0) {
              if (++this.#digits > MAX_DIGITS) throw new ChunkError("chunk size too large");
            }
            this.#size = this.#size * 16 + h;
            if (++this.#lineBytes > MAX_SIZE_LINE) throw new ChunkError("chunk size line too long");
            pos++;
            break;
          }
          if (this.#lineBytes === 0) throw new ChunkError("invalid chunk size");
          if (c === 0x3b || c === 0x20 || c === 0x09) this.#state = S_EXT;
          else if (c === CR) {
            this.#state = S_SIZE_LF;
            pos++;
          } else throw new ChunkError("invalid chunk size");
          break;
        }
        case S_EXT:
          if (c === CR) this.#state = S_SIZE_LF;
          else if (EXT[c] !== 1) throw new ChunkError("invalid chunk extension");
          else if (++this.#lineBytes > MAX_SIZE_LINE) {
            throw new ChunkError("chunk size line too long");
          }
          pos++;
          break;
        case S_SIZE_LF:
          if (c !== LF) throw new ChunkError("bare CR in a chunk size line");
          pos = this.#sizeLineDone(pos + 1);
          break;
        case S_DATA: {
          const n = Math.min(this.remaining, end - pos);
          this.spanStart = pos;
          this.spanEnd = pos + n;
          this.total += n;
          this.remaining -= n;
          if (this.remaining === 0) this.#state = S_DATA_CR;
          return pos + n;
        }
        case S_DATA_CR:
          if (c !== CR) throw new ChunkError("missing CRLF after chunk data");
          this.#state = S_DATA_LF;
          pos++;
          break;
        case S_DATA_LF:
          if (c !== LF) throw new ChunkError("missing CRLF after chunk data");
          this.#state = S_SIZE;
          pos++;
          break;
        case S_TRAILER:
          if (c === CR) {
            this.#state = S_FINAL_LF;
            pos++;
          } else if (c === 0x20 || c === 0x09) throw new ChunkError("folded trailer line");
          else {
            this.#state = S_TRAILER_LINE;
            this.#trailerLine = 0;
          }
          break;
        case S_TRAILER_LINE:
          if (++this.#trailerBytes > MAX_TRAILERS) throw new ChunkError("trailers too large");
          if (c === CR) {
            this.#state = S_TRAILER_LF;
          } else if (c === 0x3a && this.#trailerLine === 0) {
            throw new ChunkError("empty trailer field name");
          } else if (LINE[c] !== 1) throw new ChunkError("invalid byte in a trailer");
          else this.#trailerLine++;
          pos++;
          break;
        case S_TRAILER_LF:
          if (c !== LF) throw new ChunkError("bare CR in a trailer");
          this.#state = S_TRAILER;
          pos++;
          break;
        case S_FINAL_LF:
          if (c !== LF) throw new ChunkError("invalid end of chunked body");
          this.#state = S_DONE;
          return pos + 1;
        default: // S_DONE: what follows is the next request
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
