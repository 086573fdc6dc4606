/**
 * `hash`: weighted rendezvous hashing. Each member scores `weight / -ln(u)` with `u` in (0, 1)
 * from a stable 64-bit hash of (key, canonical address); the highest score among available,
 * untried members wins (the first in member order on an exact tie). Removing a member moves
 * only the keys it won, and a member wins a share of keys proportional to its weight.
 *
 * A pick without a key (undefined or "") goes round robin: `by: cookie` pools map a valid
 * cookie to its member themselves and pass no key. Recent keys are cached (4096 slots, two
 * choices per key, the less recently used one replaced), so a hot key costs one hash of the key
 * instead of one per member. The cache stays exact: a hit is checked against the tried set and the member's availability,
 * and the whole cache is dropped whenever a member becomes available again (found through
 * `healthVersion`, or by polling the members known to be down) or on `invalidate()`.
 */

import { drawHigh, hash64, hashString64, MEMBER_SEED, unitFromHashes } from "../hash64.ts";
import type { Random } from "../../base/mod.ts";
import type { Balancer, Candidate, PickContext } from "../types.ts";
import { type AvailabilitySink, AvailabilitySync } from "./_availability.ts";
import { RoundRobinBalancer } from "./round_robin.ts";

/** Slots of the key -> member cache. */
export const HASH_CACHE_SLOTS = 4096;
const MASK = HASH_CACHE_SLOTS - 1;
/** Slack on the `-ln(u) >= 1 - u` bound so that rounding can never rule out a winner. */
const BOUND_SLACK = 1 - 1e-9;

/** Counts returns of members: any return may change the winner of any key. */
class CacheEpoch implements AvailabilitySink {
  value = 0;
  markDown(_i: number): void {}
  markUp(_i: number): void {
    this.value++;
  }
}

/** Weighted rendezvous hashing with a round robin fallback for requests without a key. */
export class HashBalancer<M extends Candidate> implements Balancer<M> {
  readonly #members: readonly M[];
  readonly #index: Map<Candidate, number>;
  readonly #hi: Uint32Array;
  readonly #lo: Uint32Array;
  /** Member indices ordered by weight group, then index; group g is [start[g], start[g + 1]). */
  readonly #byGroup: Int32Array;
  readonly #groupStart: Int32Array;
  readonly #groupW: Float64Array;
  readonly #epoch = new CacheEpoch();
  readonly #avail: AvailabilitySync;
  readonly #rr: RoundRobinBalancer<M>;
  readonly #excluded: Uint8Array;
  readonly #marked: number[] = [];
  readonly #keyHash = new Uint32Array(2);
  readonly #cacheKey: (string | undefined)[] = new Array(HASH_CACHE_SLOTS).fill(undefined);
  readonly #cacheMember = new Int32Array(HASH_CACHE_SLOTS);
  readonly #cacheEpoch = new Float64Array(HASH_CACHE_SLOTS);
  readonly #cacheUsed = new Float64Array(HASH_CACHE_SLOTS);
  #tick = 0;

  /** `random` only affects the round robin fallback (see `RoundRobinBalancer`). */
  constructor(members: readonly M[], random?: Random) {
    this.#members = members;
    const n = members.length;
    this.#index = new Map();
    this.#hi = new Uint32Array(n);
    this.#lo = new Uint32Array(n);
    this.#excluded = new Uint8Array(n);
    const h = new Uint32Array(2);
    const groups = new Map<number, number[]>();
    for (let i = 0; i < n; i++) {
      const m = members[i];
      this.#index.set(m, i);
      hashString64(m.address, h, MEMBER_SEED);
      this.#hi[i] = h[0];
      this.#lo[i] = h[1];
      let list = groups.get(m.weight);
      if (list === undefined) groups.set(m.weight, list = []);
      list.push(i);
    }
    this.#groupW = new Float64Array(groups.keys());
    this.#groupStart = new Int32Array(groups.size + 1);
    this.#byGroup = new Int32Array(n);
    let k = 0;
    let g = 0;
    for (const list of groups.values()) {
      this.#groupStart[g++] = k;
      for (const i of list) this.#byGroup[k++] = i;
    }
    this.#groupStart[g] = k;
    this.#avail = new AvailabilitySync(n, this.#epoch);
    this.#rr = new RoundRobinBalancer(members, random);
    this.#cacheEpoch.fill(-1);
  }

  /** The member for `ctx.key`, round robin without a key; undefined when none is eligible. */
  pick(ctx: PickContext): M | undefined {
    const key = ctx.key;
    if (key === undefined || key === "") return this.#rr.pick(ctx);
    const members = this.#members;
    if (members.length === 0) return undefined;
    const avail = this.#avail;
    avail.sync(members, ctx);
    const kh = this.#keyHash;
    hashString64(key, kh);
    const kHi = kh[0];
    const kLo = kh[1];
    // Two candidate slots per key (from both halves of its hash): a few hot keys that share
    // one slot do not keep evicting each other.
    const s1 = kLo & MASK;
    let s2 = kHi & MASK;
    if (s2 === s1) s2 ^= 1;
    const tried = ctx.tried;
    const cacheKey = this.#cacheKey;
    const cacheEpoch = this.#cacheEpoch;
    const epoch = this.#epoch.value;
    const hit = cacheKey[s1] === key && cacheEpoch[s1] === epoch
      ? s1
      : cacheKey[s2] === key && cacheEpoch[s2] === epoch
      ? s2
      : -1;
    if (hit >= 0) {
      const c = this.#cacheMember[hit];
      const m = members[c];
      if (tried === null || !tried.has(m)) {
        if (m.available(ctx.now)) {
          this.#cacheUsed[hit] = ++this.#tick;
          return m;
        }
        avail.setDown(c);
      }
    }
    const excluded = this.#excluded;
    const marked = this.#marked;
    if (tried !== null && tried.size > 0) {
      for (const t of tried) {
        const i = this.#index.get(t);
        if (i !== undefined && excluded[i] === 0) {
          excluded[i] = 1;
          marked.push(i);
        }
      }
    }
    let c = this.#best(kHi, kLo);
    while (c >= 0 && !members[c].available(ctx.now)) {
      avail.setDown(c);
      c = this.#best(kHi, kLo);
    }
    if (marked.length > 0) {
      for (let k = 0; k < marked.length; k++) excluded[marked[k]] = 0;
      marked.length = 0;
    } else if (c >= 0) {
      // Only choices made without exclusions are the key's answer for everyone. The slot: the
      // key's own, else a stale one, else the one used less recently.
      const now = this.#epoch.value;
      const used = this.#cacheUsed;
      const slot = cacheKey[s1] === key
        ? s1
        : cacheKey[s2] === key
        ? s2
        : cacheEpoch[s1] !== now
        ? s1
        : cacheEpoch[s2] !== now
        ? s2
        : used[s1] <= used[s2]
        ? s1
        : s2;
      cacheKey[slot] = key;
      this.#cacheMember[slot] = c;
      cacheEpoch[slot] = now;
      used[slot] = ++this.#tick;
    }
    return c < 0 ? undefined : members[c];
  }

  /** Hashing ignores in-flight counts. */
  inflightChanged(_member: M): void {}

  /** Drops every cached choice and re-reads every member's availability at the next pick. */
  invalidate(): void {
    this.#epoch.value++;
    this.#avail.invalidate();
    this.#rr.invalidate();
  }

  /** Index of the highest score among members not known down and not excluded, or -1. */
  #best(kHi: number, kLo: number): number {
    const down = this.#avail.down;
    const excluded = this.#excluded;
    const hi = this.#hi;
    const lo = this.#lo;
    const byGroup = this.#byGroup;
    const start = this.#groupStart;
    const gW = this.#groupW;
    const groups = gW.length;
    if (groups === 1) {
      // One weight: the highest draw wins, in plain member order.
      let top = -1;
      let topY = 0;
      for (let i = 0; i < hi.length; i++) {
        if ((down[i] | excluded[i]) !== 0) continue;
        const y = drawHigh(kHi, kLo, hi[i], lo[i]);
        if (top < 0 || y > topY || (y === topY && this.#drawsHigher(kHi, kLo, i, top))) {
          top = i;
          topY = y;
        }
      }
      return top;
    }
    let best = -1;
    let bestScore = 0;
    let limit = 0;
    // Within one weight the score grows with the draw: find each weight's highest draw with
    // integer compares (members in weight order, then index order), then take logarithms only
    // for those, and not even for those whose bound w / (1 - u) >= score cannot win.
    for (let g = 0; g < groups; g++) {
      let top = -1;
      let topY = 0;
      for (let k = start[g], end = start[g + 1]; k < end; k++) {
        const i = byGroup[k];
        if ((down[i] | excluded[i]) !== 0) continue;
        const y = drawHigh(kHi, kLo, hi[i], lo[i]);
        if (top < 0 || y > topY || (y === topY && this.#drawsHigher(kHi, kLo, i, top))) {
          top = i;
          topY = y;
        }
      }
      if (top < 0) continue;
      const u = unitFromHashes(kHi, kLo, hi[top], lo[top]);
      const w = gW[g];
      if ((1 - u) * limit > w) continue;
      const score = w / -Math.log(u);
      if (best < 0 || score > bestScore || (score === bestScore && top < best)) {
        best = top;
        bestScore = score;
        limit = bestScore * BOUND_SLACK;
      }
    }
    return best;
  }

  /** Whether member i's full draw beats member j's (after equal high bits). */
  #drawsHigher(kHi: number, kLo: number, i: number, j: number): boolean {
    const hi = this.#hi;
    const lo = this.#lo;
    return unitFromHashes(kHi, kLo, hi[i], lo[i]) > unitFromHashes(kHi, kLo, hi[j], lo[j]);
  }
}

/**
 * The rendezvous score of `key` for a member (`weight / -ln(u)`, the draw `u` as `pick` makes
 * it): the member with the highest score is the key's. For the rare picks outside the policy
 * (every member down), one hash per call, no cache.
 */
export function rendezvousScore(key: string, address: string, weight: number): number {
  return weight / -Math.log(hash64(key, address));
}

/**
 * The hash key of a client address: an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`, also
 * written in hex or in full) becomes the IPv4 address, so both forms hash alike. Anything
 * else is returned unchanged.
 */
export function normalizeClientIp(ip: string): string {
  if (ip.indexOf(":") < 0) return ip;
  const c0 = ip.charCodeAt(0);
  if (c0 !== 58 && c0 !== 48) return ip; // a mapped address starts with "::" or "0"
  if (ip.length > 7 && ip.charCodeAt(1) === 58 && /^::ffff:/i.test(ip)) {
    const rest = ip.slice(7);
    if (isIpv4(rest)) return rest;
  }
  const g = parseIpv6(ip);
  if (g === undefined) return ip;
  for (let k = 0; k < 5; k++) if (g[k] !== 0) return ip;
  if (g[5] !== 0xffff) return ip;
  return `${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}`;
}

function isIpv4(s: string): boolean {
  const q = s.split(".");
  if (q.length !== 4) return false;
  for (const x of q) if (!/^\d{1,3}$/.test(x) || Number(x) > 255) return false;
  return true;
}

/** The eight 16-bit groups of an IPv6 address (an IPv4 tail allowed), or undefined. */
function parseIpv6(s: string): number[] | undefined {
  if (s.indexOf("%") >= 0) return undefined;
  const gap = s.indexOf("::");
  if (gap >= 0 && s.indexOf("::", gap + 1) >= 0) return undefined;
  const head = gap < 0 ? s : s.slice(0, gap);
  const tail = gap < 0 ? "" : s.slice(gap + 2);
  const a = head === "" ? [] : head.split(":");
  const b = tail === "" ? [] : tail.split(":");
  const groups: number[] = [];
  const parts = gap < 0 ? a : a.concat(b);
  const last = parts.length - 1;
  for (let k = 0; k <= last; k++) {
    const p = parts[k];
    if (k === last && p.indexOf(".") >= 0 && (gap < 0 || b.length > 0)) {
      if (!isIpv4(p)) return undefined;
      const v = p.split(".").map(Number);
      groups.push((v[0] << 8) | v[1], (v[2] << 8) | v[3]);
    } else {
      if (!/^[0-9a-fA-F]{1,4}$/.test(p)) return undefined;
      groups.push(parseInt(p, 16));
    }
  }
  if (gap < 0) return groups.length === 8 ? groups : undefined;
  const headGroups = a.length;
  const missing = 8 - groups.length;
  if (missing < 1) return undefined;
  const out: number[] = groups.slice(0, headGroups);
  for (let k = 0; k < missing; k++) out.push(0);
  for (let k = headGroups; k < groups.length; k++) out.push(groups[k]);
  return out;
}
