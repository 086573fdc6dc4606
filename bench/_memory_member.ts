import type { Socket } from "../src/http1/types.ts";

/**
 * A member in memory for the in-process path benches: every request head written to it gets
 * `answer` back on the next read, with no socket and no copy beyond `set`.
 */
export class MemoryMember implements Socket {
  #ready = 0;
  #wait: ((n: number | null) => void) | null = null;
  #buf: Uint8Array | null = null;

  constructor(private readonly answer: Uint8Array) {}

  read(p: Uint8Array): Promise<number | null> {
    if (this.#ready > 0) return Promise.resolve(this.#fill(p));
    return new Promise((resolve) => {
      this.#buf = p;
      this.#wait = resolve;
    });
  }
  #fill(p: Uint8Array): number {
    this.#ready--;
    p.set(this.answer);
    return this.answer.length;
  }
  write(p: Uint8Array): Promise<number> {
    this.#ready++;
    const w = this.#wait;
    if (w !== null) {
      this.#wait = null;
      w(this.#fill(this.#buf!));
    }
    return Promise.resolve(p.length);
  }
  close(): void {}
}
