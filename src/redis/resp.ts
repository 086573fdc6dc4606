/**
 * RESP2, the Redis wire format, both ways: a command as an array of bulk strings, and an
 * incremental reader of replies that refuses what it does not understand (an unknown type byte,
 * a length out of bounds, a missing CRLF, nesting past a small depth). Only what a client of a
 * few scripted commands needs: no RESP3, no inline commands, no pub/sub pushes.
 */

/** A reply: simple string, integer, bulk string (null when absent), array (null when absent). */
export type RespValue = string | number | null | RespError | RespValue[];

/** An error reply (`-ERR ...`, `-NOSCRIPT ...`): a value, not an exception. */
export class RespError {
  constructor(readonly message: string) {}
  /** The first word: `ERR`, `NOSCRIPT`, `WRONGTYPE`, ... */
  get code(): string {
    const space = this.message.indexOf(" ");
    return space < 0 ? this.message : this.message.slice(0, space);
  }
}

/** A reply that is not RESP2 as this reader knows it: the connection cannot be trusted. */
export class RespProtocolError extends Error {
  override readonly name = "RespProtocolError";
}

/** Largest bulk string a reply may hold (replies here are numbers and short strings). */
export const MAX_BULK = 1024 * 1024;
/** Most elements an array reply may hold. */
export const MAX_ARRAY = 1024;
/** Deepest nesting of arrays. */
export const MAX_DEPTH = 4;
/** Longest simple string, error or number line. */
const MAX_LINE = 64 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: false });

/** `*N\r\n$len\r\narg\r\n...`: a command as RESP2 bytes. */
export function encodeCommand(args: readonly string[]): Uint8Array {
  let text = `*${args.length}\r\n`;
  for (const a of args) {
    // Lengths are of the UTF-8 bytes, not of the string's UTF-16 units.
    text += `$${encoder.encode(a).length}\r\n${a}\r\n`;
  }
  return encoder.encode(text);
}

const CR = 13;
const LF = 10;

/**
 * Reads replies from bytes as they arrive: `push` the bytes, then `next()` until it returns
 * `undefined` (a reply is incomplete). Throws `RespProtocolError` on anything malformed.
 */
export class RespReader {
  #buf = new Uint8Array(0);
  #at = 0;

  /** Appends bytes read from the connection. */
  push(bytes: Uint8Array): void {
    const rest = this.#buf.length - this.#at;
    if (rest === 0) {
      this.#buf = bytes.slice();
    } else {
      const joined = new Uint8Array(rest + bytes.length);
      joined.set(this.#buf.subarray(this.#at), 0);
      joined.set(bytes, rest);
      this.#buf = joined;
    }
    this.#at = 0;
  }

  /** Bytes received and not yet part of a reply. */
  get pending(): number {
    return this.#buf.length - this.#at;
  }

  /** The next complete reply, or `undefined` when more bytes are needed. */
  next(): { value: RespValue } | undefined {
    const end = this.#parse(this.#at, 0);
    if (end === undefined) return undefined;
    this.#at = end.at;
    return { value: end.value };
  }

  /** The index of the CR of the line starting at `from`, or -1 when no full line is there yet. */
  #lineEnd(from: number): number {
    const buf = this.#buf;
    const limit = Math.min(buf.length, from + MAX_LINE + 2);
    for (let i = from; i < limit; i++) {
      if (buf[i] === CR) {
        if (i + 1 >= buf.length) return -1;
        if (buf[i + 1] !== LF) throw new RespProtocolError("a CR not followed by LF");
        return i;
      }
      if (buf[i] === LF) throw new RespProtocolError("a bare LF");
    }
    if (limit - from >= MAX_LINE + 2) throw new RespProtocolError("a line too long");
    return -1;
  }

  #integer(from: number, to: number): number {
    const text = decoder.decode(this.#buf.subarray(from, to));
    if (!/^-?(0|[1-9][0-9]{0,17})$/.test(text)) {
      throw new RespProtocolError(`an invalid integer ${JSON.stringify(text)}`);
    }
    return Number(text);
  }

  #parse(at: number, depth: number): { value: RespValue; at: number } | undefined {
    const buf = this.#buf;
    if (at >= buf.length) return undefined;
    const type = buf[at];
    const cr = this.#lineEnd(at + 1);
    if (cr < 0) return undefined;
    const after = cr + 2;
    switch (type) {
      case 0x2b: // +
        return { value: decoder.decode(buf.subarray(at + 1, cr)), at: after };
      case 0x2d: // -
        return { value: new RespError(decoder.decode(buf.subarray(at + 1, cr))), at: after };
      case 0x3a: // :
        return { value: this.#integer(at + 1, cr), at: after };
      case 0x24: { // $
        const n = this.#integer(at + 1, cr);
        if (n === -1) return { value: null, at: after };
        if (n < 0 || n > MAX_BULK) throw new RespProtocolError(`a bulk length ${n}`);
        if (after + n + 2 > buf.length) return undefined;
        if (buf[after + n] !== CR || buf[after + n + 1] !== LF) {
          throw new RespProtocolError("a bulk string not ended by CRLF");
        }
        return { value: decoder.decode(buf.subarray(after, after + n)), at: after + n + 2 };
      }
      case 0x2a: { // *
        const n = this.#integer(at + 1, cr);
        if (n === -1) return { value: null, at: after };
        if (n < 0 || n > MAX_ARRAY) throw new RespProtocolError(`an array length ${n}`);
        if (depth >= MAX_DEPTH) throw new RespProtocolError("arrays nested too deep");
        const items: RespValue[] = [];
        let pos = after;
        for (let i = 0; i < n; i++) {
          const item = this.#parse(pos, depth + 1);
          if (item === undefined) return undefined;
          items.push(item.value);
          pos = item.at;
        }
        return { value: items, at: pos };
      }
      default:
        throw new RespProtocolError(`an unknown reply type byte 0x${type.toString(16)}`);
    }
  }
}
