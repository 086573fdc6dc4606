/**
 * One stored response (a variant under a cache key): its head, its whole body, what the age
 * and freshness calculations need, and the Vary selection it was stored under.
 */
import type { AgeBasis } from "./freshness.ts";

/** Bytes backed by a plain ArrayBuffer. */
export type Bytes = Uint8Array<ArrayBuffer>;

/** Bytes counted per entry on top of its key, headers and body (objects, links, maps). */
export const ENTRY_OVERHEAD = 512;

export interface EntryInit extends AgeBasis {
  readonly status: number;
  /** Lower-case names, received order; hop-by-hop, `age` and `set-cookie` already removed. */
  headers: [string, string][];
  readonly body: Bytes;
  /** Freshness lifetime in seconds. */
  lifetime: number;
  /** Seconds a stale entry may be served while it is refreshed (member's value, capped). */
  staleWhileRevalidate: number;
  /** Seconds a stale entry may be served when the member fails (member's value, capped). */
  staleIfError: number;
  /** `no-cache`: every use is validated with the member first. */
  noCache: boolean;
  /** `must-revalidate` / `proxy-revalidate`: never served stale. */
  mustRevalidate: boolean;
  /** `immutable` (RFC 8246): a reload's `max-age` does not revalidate it while it is fresh. */
  immutable?: boolean;
  etag: string | null;
  lastModified: string | null;
  /** Vary names then `key_headers` names, and the request's normalised values of them. */
  readonly selectNames: readonly string[];
  readonly selectValues: readonly (string | null)[];
  /** `tenant/app` that stored it (reloads drop the entries of applications without cache). */
  readonly owner: string;
  /**
   * scalwsd made the answer itself (not a member): its hits are scalwsd's own answers too, for
   * `error_pages`. Default false.
   */
  readonly own?: boolean;
}

export class Entry implements AgeBasis {
  readonly status: number;
  headers: [string, string][];
  readonly body: Bytes;
  requestTime: number;
  responseTime: number;
  dateValue: number;
  ageValue: number;
  lifetime: number;
  staleWhileRevalidate: number;
  staleIfError: number;
  noCache: boolean;
  mustRevalidate: boolean;
  immutable: boolean;
  etag: string | null;
  lastModified: string | null;
  readonly selectNames: readonly string[];
  readonly selectValues: readonly (string | null)[];
  readonly owner: string;
  readonly own: boolean;
  /** Bytes charged to the store's budget. */
  size = 0;
  /** The key this entry is stored under (set by the store). */
  key = "";
  /** Least-recently-used list links (owned by the store). */
  prev: Entry | null = null;
  next: Entry | null = null;
  /** A background refresh is under way. */
  refreshing = false;
  /** Read from or written to the disk tier (`server.cache.path`). */
  onDisk = false;
  /** Its file in the disk tier ("" when not known). */
  diskFile = "";
  /** The disk tier's shared epoch when this copy was last checked against its file (NaN: never). */
  seen = NaN;
  /**
   * The pooled buffer `body` is a view of (an entry just read from the disk tier), given back
   * with `DiskStore.release` once the answer is written; null when the body is its own.
   */
  lent: Bytes | null = null;

  constructor(init: EntryInit) {
    this.status = init.status;
    this.headers = init.headers;
    this.body = init.body;
    this.requestTime = init.requestTime;
    this.responseTime = init.responseTime;
    this.dateValue = init.dateValue;
    this.ageValue = init.ageValue;
    this.lifetime = init.lifetime;
    this.staleWhileRevalidate = init.staleWhileRevalidate;
    this.staleIfError = init.staleIfError;
    this.noCache = init.noCache;
    this.mustRevalidate = init.mustRevalidate;
    this.immutable = init.immutable ?? false;
    this.etag = init.etag;
    this.lastModified = init.lastModified;
    this.selectNames = init.selectNames;
    this.selectValues = init.selectValues;
    this.owner = init.owner;
    this.own = init.own ?? false;
  }

  /** Bytes of the head and the selection, for the budget. */
  headBytes(): number {
    let n = 0;
    for (const [k, v] of this.headers) n += k.length + v.length + 32;
    for (let i = 0; i < this.selectNames.length; i++) {
      n += this.selectNames[i].length + (this.selectValues[i]?.length ?? 0) + 16;
    }
    return n;
  }

  /** The first value of header `name` (lower-case) in the stored head. */
  header(name: string): string | null {
    for (const h of this.headers) if (h[0] === name) return h[1];
    return null;
  }
}
