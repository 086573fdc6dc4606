/**
 * The PEM files one build (start or reload) reads, each read once (`PemFiles`), so that the
 * preflight checks and the pools built after them see the same text.
 *
 * @module
 */

import type { PemReader } from "../upstream/mod.ts";

/**
 * The PEM files one build (start or reload) reads, by path. The preflight checks fill it and
 * the pools built after them take the same text, so each file is read once per build and a
 * file rotated in between cannot pass the check with one text and be used with another. A
 * failed read is kept too: asking again throws the same error. Make a new one per build;
 * `reader` defaults to `Deno.readTextFileSync`.
 */
export class PemFiles {
  readonly #texts = new Map<string, string>();
  readonly #failures = new Map<string, unknown>();
  readonly #reader: PemReader;

  constructor(reader: PemReader = Deno.readTextFileSync) {
    this.#reader = reader;
  }

  /** The text of `path`, read on first use; throws what the reader threw. Pass as a `PemReader`. */
  readonly read = (path: string): string => {
    const text = this.#texts.get(path);
    if (text !== undefined) return text;
    if (this.#failures.has(path)) throw this.#failures.get(path);
    try {
      const read = this.#reader(path);
      this.#texts.set(path, read);
      return read;
    } catch (err) {
      this.#failures.set(path, err);
      throw err;
    }
  };
}
