/** In-memory sockets for tests of the client without the network. */

import type { Socket, SocketFactory } from "./types.ts";

/** Plays a scripted byte stream back in pieces, then EOF (or an error); records writes. */
export class FakeSocket implements Socket {
  readonly #input: Uint8Array;
  readonly #pieces: number[];
  readonly #endError: Error | null;
  #pos = 0;
  #piece = 0;
  written = 0;
  writes: Uint8Array[] = [];
  closed = false;
  /** Thrown by the first write when set. */
  writeError: Error | null = null;
  /** When set, reads past the input wait until `close()` instead of seeing EOF. */
  hangAtEnd = false;
  #hung: ((err: Error) => void) | null = null;

  /** `pieces` are the sizes of successive reads (cycled); `endError` replaces the final EOF. */
  constructor(input: Uint8Array, pieces: number[] = [65536], endError: Error | null = null) {
    this.#input = input;
    this.#pieces = pieces;
    this.#endError = endError;
  }

  read(p: Uint8Array): Promise<number | null> {
    if (this.closed) return Promise.reject(new Deno.errors.Interrupted("operation canceled"));
    if (this.#pos >= this.#input.length) {
      if (this.hangAtEnd) {
        return new Promise((_, reject) => this.#hung = reject);
      }
      return this.#endError === null ? Promise.resolve(null) : Promise.reject(this.#endError);
    }
    const want = this.#pieces[this.#piece++ % this.#pieces.length];
    const n = Math.min(p.length, want, this.#input.length - this.#pos);
    p.set(this.#input.subarray(this.#pos, this.#pos + n));
    this.#pos += n;
    return Promise.resolve(n);
  }

  write(p: Uint8Array): Promise<number> {
    if (this.writeError !== null) return Promise.reject(this.writeError);
    if (this.closed) return Promise.reject(new Deno.errors.BadResource("closed"));
    this.writes.push(p.slice());
    this.written += p.length;
    return Promise.resolve(p.length);
  }

  close(): void {
    this.closed = true;
    this.#hung?.(new Deno.errors.Interrupted("operation canceled"));
    this.#hung = null;
  }
}

/** Hands out prepared sockets in order; rejects with `error` when none are left. */
export class FakeFactory implements SocketFactory {
  readonly sockets: FakeSocket[];
  connects = 0;

  constructor(sockets: FakeSocket[]) {
    this.sockets = sockets;
  }

  connect(_timeoutMs: number): Promise<Socket> {
    const s = this.sockets[this.connects++];
    if (s === undefined) return Promise.reject(new Error("no more fake sockets"));
    return Promise.resolve(s);
  }
}

/** Latin1 bytes of a string. */
export function bytes(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}
