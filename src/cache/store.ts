/**
 * The process's response store: entries (variants) grouped by cache key, a byte budget, and
 * least-recently-used eviction across all of them. One store per process; it outlives
 * generations. Not thread-safe and not async: every operation completes in one call.
 */
import { type Entry, ENTRY_OVERHEAD } from "./entry.ts";

/** Variants kept per key; a new one past this evicts the oldest of the key. */
export const MAX_VARIANTS = 32;

/** Objects and bytes of one owner (`tenant/app`). */
export interface OwnerUsage {
  objects: number;
  bytes: number;
}

/**
 * What a purge names: one path (every query and variant of it; with `?query`, that URL's
 * variants only), a path prefix, or everything.
 */
export type PurgeTarget =
  | { readonly host: string; readonly path: string }
  | { readonly host: string; readonly prefix: string }
  | { readonly all: true };

/** Scheme, host and path of a key (`https://a.example/x?y` -> `a.example`, `/x`). */
export function splitKey(key: string): { host: string; path: string } {
  const s = key.indexOf("://") + 3;
  let slash = key.indexOf("/", s);
  if (slash < 0) slash = key.length;
  const q = key.indexOf("?", slash);
  return { host: key.slice(s, slash), path: key.slice(slash, q < 0 ? key.length : q) };
}

function sameHost(keyHost: string, host: string): boolean {
  if (keyHost === host) return true;
  // `example.com` names every port of the host.
  return keyHost.length > host.length && keyHost.startsWith(host) &&
    keyHost.charCodeAt(host.length) === 0x3a && !host.includes(":");
}

/** Whether purge target `t` names the entries under `key`. */
export function purgeMatches(t: PurgeTarget, key: string): boolean {
  if ("all" in t) return true;
  const k = splitKey(key);
  if (!sameHost(k.host, t.host.toLowerCase())) return false;
  if ("path" in t) {
    // A path with a query names that URL only; without one, every query of the path.
    const target = t.path.includes("?")
      ? key.slice(key.indexOf("/", key.indexOf("://") + 3))
      : k.path;
    return target === t.path;
  }
  return k.path.startsWith(t.prefix);
}

export class Store {
  private readonly groups = new Map<string, Entry[]>();
  /** Least recently used first. */
  private head: Entry | null = null;
  private tail: Entry | null = null;
  /** Entries stored. */
  objects = 0;
  /** Bytes charged (bodies, heads, keys and `ENTRY_OVERHEAD` each). */
  bytes = 0;
  /** Entries removed to keep within the budget or the variant limit. */
  evictions = 0;
  readonly owners = new Map<string, OwnerUsage>();

  /** `maxBytes`: the budget (`server.cache.max_size`). */
  constructor(public maxBytes: number) {}

  /** A new budget (a reload); least recently used entries go until the store fits. */
  setBudget(maxBytes: number): void {
    this.maxBytes = maxBytes;
    while (this.bytes > this.maxBytes && this.head !== null) this.drop(this.head, true);
  }

  /** The variants under `key`, oldest first (do not modify). */
  variants(key: string): readonly Entry[] | undefined {
    return this.groups.get(key);
  }

  /** Marks `e` as just used (nothing when it is not stored: a disk hit too large for memory). */
  touch(e: Entry): void {
    if (this.tail === e || (e.prev === null && this.head !== e)) return;
    this.unlink(e);
    this.append(e);
  }

  /**
   * Stores `e` under `key`, replacing the variant with the same selection; evicts the oldest
   * variant past `MAX_VARIANTS` and least recently used entries past the budget. False when
   * `e` alone is larger than the budget (nothing changes then).
   */
  put(key: string, e: Entry): boolean {
    e.key = key;
    e.size = e.body.length + e.headBytes() + key.length * 2 + ENTRY_OVERHEAD;
    if (e.size > this.maxBytes) return false;
    let group = this.groups.get(key);
    if (group === undefined) {
      group = [];
      this.groups.set(key, group);
    } else {
      for (let i = 0; i < group.length; i++) {
        if (sameSelection(group[i], e)) {
          this.drop(group[i], false);
          break;
        }
      }
      if (group.length >= MAX_VARIANTS) this.drop(group[0], true);
      // drop() deletes an emptied group.
      if (!this.groups.has(key)) this.groups.set(key, group);
    }
    group.push(e);
    this.append(e);
    this.objects++;
    this.bytes += e.size;
    const u = this.owners.get(e.owner);
    if (u === undefined) this.owners.set(e.owner, { objects: 1, bytes: e.size });
    else {
      u.objects++;
      u.bytes += e.size;
    }
    while (this.bytes > this.maxBytes && this.head !== null && this.head !== e) {
      this.drop(this.head, true);
    }
    return true;
  }

  /** Recharges `e` after its head changed (a revalidation). */
  resize(e: Entry): void {
    if (e.prev === null && this.head !== e) return; // not stored any more
    const size = e.body.length + e.headBytes() + e.key.length * 2 + ENTRY_OVERHEAD;
    const d = size - e.size;
    e.size = size;
    this.bytes += d;
    const u = this.owners.get(e.owner);
    if (u !== undefined) u.bytes += d;
    while (this.bytes > this.maxBytes && this.head !== null && this.head !== e) {
      this.drop(this.head, true);
    }
  }

  /** True while `e` is in the store. */
  has(e: Entry): boolean {
    const g = this.groups.get(e.key);
    return g !== undefined && g.includes(e);
  }

  /** Removes one entry. */
  remove(e: Entry): void {
    if (this.has(e)) this.drop(e, false);
  }

  /** Removes every variant under `key`; returns how many. */
  removeKey(key: string): number {
    const g = this.groups.get(key);
    if (g === undefined) return 0;
    const n = g.length;
    for (const e of [...g]) this.drop(e, false);
    return n;
  }

  /** Removes what `t` names; returns the number of entries removed. */
  purge(t: PurgeTarget): number {
    if ("all" in t) {
      const n = this.objects;
      this.clear();
      return n;
    }
    let n = 0;
    for (const key of [...this.groups.keys()]) {
      if (purgeMatches(t, key)) n += this.removeKey(key);
    }
    return n;
  }

  /** Removes the entries whose owner `keep` refuses (a reload removed their cache). */
  dropOwners(keep: (owner: string) => boolean): number {
    let n = 0;
    for (let e = this.head; e !== null;) {
      const next = e.next;
      if (!keep(e.owner)) {
        this.drop(e, false);
        n++;
      }
      e = next;
    }
    return n;
  }

  /** Empties the store. */
  clear(): void {
    this.groups.clear();
    for (let e = this.head; e !== null;) {
      const next = e.next;
      e.prev = e.next = null;
      e = next;
    }
    this.head = this.tail = null;
    this.objects = 0;
    this.bytes = 0;
    this.owners.clear();
  }

  /** Keys from least to most recently used (tests and the admin view). */
  *lru(): IterableIterator<Entry> {
    for (let e = this.head; e !== null; e = e.next) yield e;
  }

  private drop(e: Entry, evicted: boolean): void {
    const g = this.groups.get(e.key);
    if (g !== undefined) {
      const i = g.indexOf(e);
      if (i >= 0) g.splice(i, 1);
      if (g.length === 0) this.groups.delete(e.key);
    }
    this.unlink(e);
    this.objects--;
    this.bytes -= e.size;
    const u = this.owners.get(e.owner);
    if (u !== undefined) {
      u.objects--;
      u.bytes -= e.size;
      if (u.objects === 0) this.owners.delete(e.owner);
    }
    if (evicted) this.evictions++;
  }

  private append(e: Entry): void {
    e.prev = this.tail;
    e.next = null;
    if (this.tail !== null) this.tail.next = e;
    else this.head = e;
    this.tail = e;
  }

  private unlink(e: Entry): void {
    if (e.prev !== null) e.prev.next = e.next;
    else if (this.head === e) this.head = e.next;
    if (e.next !== null) e.next.prev = e.prev;
    else if (this.tail === e) this.tail = e.prev;
    e.prev = e.next = null;
  }
}

function sameSelection(a: Entry, b: Entry): boolean {
  const an = a.selectNames;
  const bn = b.selectNames;
  if (an.length !== bn.length) return false;
  for (let i = 0; i < an.length; i++) {
    if (an[i] !== bn[i] || a.selectValues[i] !== b.selectValues[i]) return false;
  }
  return true;
}
