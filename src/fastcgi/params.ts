/**
 * FastCGI name-value pairs (the PARAMS stream): each length in 1 byte below 128, else 4 bytes
 * with the top bit set. Names and values are byte strings (chars up to U+00FF as one byte,
 * others as UTF-8).
 */

const encoder = new TextEncoder();

/**
 * Bytes kept before the pairs in `ParamsBuffer.buf`: room for BEGIN_REQUEST (16) and the PARAMS
 * record header (8), so that a request is written from this one buffer (`fcgiSend`).
 */
export const PARAMS_HEAD_ROOM = 24;

/**
 * A growing byte buffer that params are appended to, at `PARAMS_HEAD_ROOM`; reused across
 * requests. `length` counts the pairs' bytes.
 */
export class ParamsBuffer {
  buf: Uint8Array<ArrayBuffer>;
  length = 0;

  constructor(size = 2048) {
    this.buf = new Uint8Array(PARAMS_HEAD_ROOM + size);
  }

  reset(): void {
    this.length = 0;
  }

  /** The encoded pairs (a view). */
  bytes(): Uint8Array<ArrayBuffer> {
    return this.buf.subarray(PARAMS_HEAD_ROOM, PARAMS_HEAD_ROOM + this.length);
  }

  /** Makes room for `extra` bytes after the pairs (records written behind them). */
  ensure(extra: number): void {
    const need = PARAMS_HEAD_ROOM + this.length + extra;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, PARAMS_HEAD_ROOM + this.length));
    this.buf = next;
  }

  /** Appends one pair. */
  add(name: string, value: string): void {
    // One pass for the usual byte strings (every char up to U+00FF); else measured first.
    this.ensure(name.length + value.length + 8);
    const start = PARAMS_HEAD_ROOM + this.length;
    let at = this.#length(start, name.length);
    at = this.#length(at, value.length);
    at = writeLatin1(this.buf, at, name);
    if (at >= 0) at = writeLatin1(this.buf, at, value);
    if (at >= 0) {
      this.length = at - PARAMS_HEAD_ROOM;
      return;
    }
    const n = byteLength(name);
    const v = byteLength(value);
    this.ensure(n + v + 8);
    at = this.#length(start, n);
    at = this.#length(at, v);
    at = writeString(this.buf, at, name, n);
    this.length = writeString(this.buf, at, value, v) - PARAMS_HEAD_ROOM;
  }

  #length(at: number, len: number): number {
    const b = this.buf;
    if (len < 128) {
      b[at] = len;
      return at + 1;
    }
    b[at] = 0x80 | (len >>> 24);
    b[at + 1] = (len >>> 16) & 0xff;
    b[at + 2] = (len >>> 8) & 0xff;
    b[at + 3] = len & 0xff;
    return at + 4;
  }
}

/** Bytes `s` takes: one per char up to U+00FF (header values are byte strings), else UTF-8. */
function byteLength(s: string): number {
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 0xff) return encoder.encode(s).length;
  }
  return s.length;
}

/** Writes `s` one byte per char; -1 (some bytes written) when a char is over U+00FF. */
function writeLatin1(buf: Uint8Array, at: number, s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0xff) return -1;
    buf[at + i] = c;
  }
  return at + s.length;
}

function writeString(buf: Uint8Array, at: number, s: string, n: number): number {
  if (n !== s.length) {
    buf.set(encoder.encode(s), at);
    return at + n;
  }
  for (let i = 0; i < n; i++) buf[at + i] = s.charCodeAt(i);
  return at + n;
}

/**
 * Decodes a whole PARAMS stream into pairs (names and values as latin1 strings). Throws
 * `RangeError` on a truncated stream. Used by test servers and the fuzzer.
 */
export function decodeParams(bytes: Uint8Array): [string, string][] {
  const out: [string, string][] = [];
  let at = 0;
  const len = (): number => {
    if (at >= bytes.length) throw new RangeError("params truncated in a length");
    const b = bytes[at];
    if (b < 128) {
      at++;
      return b;
    }
    if (at + 4 > bytes.length) throw new RangeError("params truncated in a length");
    const v = ((b & 0x7f) << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3];
    at += 4;
    return v;
  };
  while (at < bytes.length) {
    const n = len();
    const v = len();
    if (at + n + v > bytes.length) throw new RangeError("params truncated in a name or value");
    out.push([latin1(bytes, at, at + n), latin1(bytes, at + n, at + n + v)]);
    at += n + v;
  }
  return out;
}

function latin1(b: Uint8Array, from: number, to: number): string {
  let s = "";
  for (let i = from; i < to; i++) s += String.fromCharCode(b[i]);
  return s;
}
