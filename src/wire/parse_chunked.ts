/**
 * The one decoder of chunked bodies (RFC 9112 7.1), for both directions: the front reads a
 * client's request body with it in strict mode (CRLF line ends only, extensions as RFC 9112
 * 7.1.1 writes them, trailers checked byte by byte, 16 KiB of them), the HTTP/1 client reads a
 * member's response body in lenient mode (a bare LF also ends a line, as RFC 9112 2.2 lets a
 * recipient accept; extensions of any text bytes; 64 KiB of trailers). Hex sizes without sign,
 * prefix or overflow are required in both; extensions are skipped and trailers dropped. It never
 * allocates while decoding and throws what its user's `fail` makes, so each side keeps its own
 * error type.
 */

import { TCHAR } from "./parse_head.ts";

const S_SIZE = 0; // hex digits of a chunk size
const S_EXT = 1; // lenient: after the size, BWS and extensions (text bytes) up to the line end
const S_SIZE_LF = 2; // CR seen after the size line
const S_DATA = 3;
const S_DATA_CR = 4; // the CRLF after chunk data
const S_DATA_LF = 5;
const S_TRAILER = 6; // start of a trailer line (or the final blank line)
const S_TRAILER_STRICT = 7; // inside a trailer line, strict mode
const S_TRAILER_LENIENT = 8; // inside a trailer line, lenient mode
const S_TRAILER_LF = 9; // CR seen at the end of a trailer line (strict mode)
const S_FINAL_LF = 10;
const S_DONE = 11;
// Strict extensions: *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] ) [BWS].
const S_X_BWS = 12; // after the size or a value: BWS, then ";" or the line end
const S_X_NAME_START = 13; // after ";": BWS, then a name
const S_X_NAME = 14;
const S_X_AFTER_NAME = 15; // BWS after a name: "=", ";" or the line end
const S_X_VALUE_START = 16; // after "=": BWS, then a token or a quoted string
const S_X_TOKEN = 17;
const S_X_QUOTED = 18;
const S_X_QUOTED_ESCAPE = 19;

/** Longest accepted chunk-size line, extensions included. */
const MAX_SIZE_LINE = 4096;
/** Most hex digits of a chunk size after leading zeros (13 stay below 2^53). */
const MAX_DIGITS = 13;

const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const HTAB = 0x09;
const SEMI = 0x3b;
const EQUALS = 0x3d;
const DQUOTE = 0x22;

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

/** 1 for bytes allowed in chunk extensions and strict trailer lines: HTAB, SP, VCHAR, obs-text. */
const TEXT = new Uint8Array(256);
for (let c = 0; c < 256; c++) TEXT[c] = c === 0x09 || (c >= 0x20 && c !== 0x7f) ? 1 : 0;
/** 1 for qdtext (RFC 9110 5.6.4): TEXT less `"` and `\`. */
const QDTEXT = new Uint8Array(256);
for (let c = 0; c < 256; c++) QDTEXT[c] = TEXT[c] === 1 && c !== 0x22 && c !== 0x5c ? 1 : 0;

/** How a `ChunkedDecoder` reads, and what it throws. */
export interface ChunkedOptions {
  /**
   * True: CRLF line ends only, no folded or nameless trailer lines, trailer bytes checked
   * (what a server must insist on). False: a bare LF ends a line too, trailers only lose a NUL
   * or a bare CR (what a client may accept from a member).
   */
  readonly strict: boolean;
  /** Most trailer bytes accepted (they are dropped). */
  readonly maxTrailers: number;
  /** Makes the error thrown for bad framing from its message. */
  readonly fail: (message: string) => Error;
}

/**
 * Feed it bytes with `decode`; each call stops after the framing it could consume and reports
 * at most one run of body bytes in `[spanStart, spanEnd)` of the buffer it was given.
 */
export class ChunkedDecoder {
  readonly #strict: boolean;
  readonly #maxTrailers: number;
  readonly #fail: (message: string) => Error;
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
  /** Body bytes reported (or consumed with `consumeData`) so far. */
  total = 0;

  constructor(opts: ChunkedOptions) {
    this.#strict = opts.strict;
    this.#maxTrailers = opts.maxTrailers;
    this.#fail = opts.fail;
  }

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
    this.total += n;
    this.remaining -= n;
    if (this.remaining === 0) this.#state = S_DATA_CR;
  }

  /**
   * Consumes `buf[pos, end)` up to and including the next run of data bytes; returns the new
   * position. Throws what `fail` makes on bad framing.
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
              if (++this.#digits > MAX_DIGITS) throw this.#fail("chunk size too large");
            }
            this.#size = this.#size * 16 + h;
            if (++this.#lineBytes > MAX_SIZE_LINE) throw this.#fail("chunk size line too long");
            pos++;
            break;
          }
          if (this.#lineBytes === 0) throw this.#fail("invalid chunk size");
          if (c === SEMI || c === SP || c === HTAB) this.#state = this.#strict ? S_X_BWS : S_EXT;
          else if (c === CR) {
            this.#state = S_SIZE_LF;
            pos++;
          } else if (c === LF && !this.#strict) pos = this.#sizeLineDone(pos + 1);
          else throw this.#fail("invalid chunk size");
          break;
        }
        case S_EXT:
          if (c === CR) this.#state = S_SIZE_LF;
          else if (c === LF && !this.#strict) {
            pos = this.#sizeLineDone(pos + 1);
            break;
          } else if (TEXT[c] !== 1) throw this.#fail("invalid chunk extension");
          else if (++this.#lineBytes > MAX_SIZE_LINE) throw this.#fail("chunk size line too long");
          pos++;
          break;
        case S_X_BWS:
        case S_X_NAME_START:
        case S_X_NAME:
        case S_X_AFTER_NAME:
        case S_X_VALUE_START:
        case S_X_TOKEN:
        case S_X_QUOTED:
        case S_X_QUOTED_ESCAPE:
          if (++this.#lineBytes > MAX_SIZE_LINE) throw this.#fail("chunk size line too long");
          this.#state = this.#extension(c);
          pos++;
          break;
        case S_SIZE_LF:
          if (c !== LF) throw this.#fail("bare CR in a chunk size line");
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
          if (c === CR) this.#state = S_DATA_LF;
          else if (c === LF && !this.#strict) this.#state = S_SIZE;
          else throw this.#fail("missing CRLF after chunk data");
          pos++;
          break;
        case S_DATA_LF:
          if (c !== LF) throw this.#fail("missing CRLF after chunk data");
          this.#state = S_SIZE;
          pos++;
          break;
        case S_TRAILER:
          if (c === CR) {
            this.#state = S_FINAL_LF;
            pos++;
          } else if (this.#strict) {
            if (c === 0x20 || c === 0x09) throw this.#fail("folded trailer line");
            this.#state = S_TRAILER_STRICT;
            this.#trailerLine = 0;
          } else if (c === LF) {
            this.#state = S_DONE;
            return pos + 1;
          } else this.#state = S_TRAILER_LENIENT;
          break;
        case S_TRAILER_STRICT:
          if (++this.#trailerBytes > this.#maxTrailers) throw this.#trailersTooLarge();
          if (c === CR) this.#state = S_TRAILER_LF;
          else if (c === 0x3a && this.#trailerLine === 0) {
            throw this.#fail("empty trailer field name");
          } else if (TEXT[c] !== 1) throw this.#fail("invalid byte in a trailer");
          else this.#trailerLine++;
          pos++;
          break;
        case S_TRAILER_LENIENT:
          if (++this.#trailerBytes > this.#maxTrailers) throw this.#trailersTooLarge();
          if (c === LF) this.#state = S_TRAILER;
          else if (c === 0 || (c === CR && pos + 1 < end && buf[pos + 1] !== LF)) {
            throw this.#fail("invalid byte in a trailer");
          }
          pos++;
          break;
        case S_TRAILER_LF:
          if (c !== LF) throw this.#fail("bare CR in a trailer");
          this.#state = S_TRAILER;
          pos++;
          break;
        case S_FINAL_LF:
          if (c !== LF) throw this.#fail("invalid end of chunked body");
          this.#state = S_DONE;
          return pos + 1;
        default: // S_DONE: what follows is the caller's (the next request, or surplus)
          return pos;
      }
    }
    return pos;
  }

  /** The strict extension state after byte `c`; throws on a byte the grammar has no room for. */
  #extension(c: number): number {
    const blank = c === SP || c === HTAB;
    switch (this.#state) {
      case S_X_BWS:
        if (blank) return S_X_BWS;
        if (c === SEMI) return S_X_NAME_START;
        if (c === CR) return S_SIZE_LF;
        break;
      case S_X_NAME_START:
        if (blank) return S_X_NAME_START;
        if (TCHAR[c] === 1) return S_X_NAME;
        break;
      case S_X_NAME:
      case S_X_AFTER_NAME:
        if (TCHAR[c] === 1 && this.#state === S_X_NAME) return S_X_NAME;
        if (blank) return S_X_AFTER_NAME;
        if (c === EQUALS) return S_X_VALUE_START;
        if (c === SEMI) return S_X_NAME_START;
        if (c === CR) return S_SIZE_LF;
        break;
      case S_X_VALUE_START:
        if (blank) return S_X_VALUE_START;
        if (TCHAR[c] === 1) return S_X_TOKEN;
        if (c === DQUOTE) return S_X_QUOTED;
        break;
      case S_X_TOKEN:
        if (TCHAR[c] === 1) return S_X_TOKEN;
        if (blank) return S_X_BWS;
        if (c === SEMI) return S_X_NAME_START;
        if (c === CR) return S_SIZE_LF;
        break;
      case S_X_QUOTED:
        if (c === DQUOTE) return S_X_BWS;
        if (c === 0x5c) return S_X_QUOTED_ESCAPE;
        if (QDTEXT[c] === 1) return S_X_QUOTED;
        break;
      case S_X_QUOTED_ESCAPE:
        if (TEXT[c] === 1) return S_X_QUOTED;
        break;
    }
    throw this.#fail(c === CR ? "unterminated chunk extension" : "invalid chunk extension");
  }

  #trailersTooLarge(): Error {
    return this.#fail(`trailers over ${this.#maxTrailers >> 10} KiB`);
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
