/**
 * Weighted `backends`: smooth weighted round robin (nginx) over the entries of one route.
 * Entries with weight 0 are never chosen. A pool entry whose pool has no members is skipped
 * (and gains nothing) while another eligible entry exists; `status` entries are never skipped.
 */

import type { BackendEntry } from "../config/mod.ts";

/** Chooses a backend entry per request; one per route, built with the route. */
export class BackendSelector {
  readonly #entries: readonly BackendEntry[];
  readonly #current: Float64Array;
  readonly #eligible: Uint8Array;

  constructor(entries: readonly BackendEntry[]) {
    if (!entries.some((e) => e.weight > 0)) {
      throw new Error("Backends need at least one entry with a weight above 0");
    }
    this.#entries = entries;
    this.#current = new Float64Array(entries.length);
    this.#eligible = new Uint8Array(entries.length);
  }

  /** The entry for the next request; `hasMembers` tells whether a pool has members now. */
  pick(hasMembers: (pool: string) => boolean): BackendEntry {
    const entries = this.#entries;
    const n = entries.length;
    const eligible = this.#eligible;
    let any = false;
    for (let i = 0; i < n; i++) {
      const e = entries[i];
      const ok = e.weight > 0 && (e.pool === undefined || hasMembers(e.pool));
      eligible[i] = ok ? 1 : 0;
      if (ok) any = true;
    }
    // Every weighted entry is a pool without members: choose among them (each answers 503).
    if (!any) { for (let i = 0; i < n; i++) eligible[i] = entries[i].weight > 0 ? 1 : 0; }
    const current = this.#current;
    let best = -1;
    let total = 0;
    for (let i = 0; i < n; i++) {
      if (eligible[i] === 0) continue;
      const w = entries[i].weight;
      current[i] += w;
      total += w;
      if (best < 0 || current[i] > current[best]) best = i;
    }
    current[best] -= total;
    return entries[best];
  }
}
