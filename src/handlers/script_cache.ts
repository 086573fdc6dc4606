/**
 * Recent script resolutions of a PHP runtime, kept for `SCRIPT_CACHE_TTL` (like nginx's
 * `open_file_cache ... valid=1s`): under load most requests name the same few scripts, and each
 * resolution costs a realpath and a stat. A file created or removed is seen within a second.
 */

import type { Clock } from "../base/mod.ts";
import type { Resolved } from "./php_script.ts";

/** How long a resolution is reused (ms). */
export const SCRIPT_CACHE_TTL = 1000;
/** Most paths kept; the cache starts over when full. */
export const SCRIPT_CACHE_SIZE = 1024;

interface Entry {
  readonly resolved: Resolved;
  readonly at: number;
}

export class ScriptCache {
  readonly #entries = new Map<string, Entry>();

  constructor(private readonly clock: Clock) {}

  get(path: string): Resolved | undefined {
    const e = this.#entries.get(path);
    if (e === undefined) return undefined;
    if (this.clock.now() - e.at >= SCRIPT_CACHE_TTL) {
      this.#entries.delete(path);
      return undefined;
    }
    return e.resolved;
  }

  set(path: string, resolved: Resolved): void {
    if (this.#entries.size >= SCRIPT_CACHE_SIZE) this.#entries.clear();
    this.#entries.set(path, { resolved, at: this.clock.now() });
  }
}
