/**
 * Exact nginx smooth weighted round robin in O(distinct weights + log n) per pick.
 *
 * nginx, per pick: every eligible member's `current += weight`, the largest `current` wins
 * (first in member order on ties), and the winner's `current -= total` of the eligible weights;
 * members that are not eligible neither gain nor count. Here eligible members sit in buckets
 * (round_robin: one; least_conn: one per in-flight/weight ratio, only the lowest picks), and a
 * bucket adds `weight` to all of its members at once by counting its picks in `steps`: member
 * i's current is `base[i] + w[i] * steps`. Members of one bucket with the same weight gain
 * alike, so their order never changes between picks and a max-heap on `base` (then index)
 * per weight holds them; a pick compares only the tops of those heaps. A member taken out of
 * its bucket (unavailable, tried, moved) keeps its current frozen in `base` until it returns.
 */

import type { AvailabilitySink } from "./_availability.ts";

/** Members of one bucket with one weight: a max-heap of indices on (base, lower index). */
class GroupHeap {
  readonly items: number[] = [];
  /** Position in the bucket's list of non-empty heaps, -1 when empty. */
  slot = -1;
  constructor(readonly w: number, readonly group: number) {}
}

class Bucket {
  steps = 0;
  total = 0;
  size = 0;
  inMin = false;
  /** The non-empty heaps, in no particular order; slot k's top is mirrored in the arrays below. */
  readonly heaps: GroupHeap[] = [];
  /** base, weight and index of each listed heap's top, so a pick scans typed arrays only. */
  topBase = new Float64Array(4);
  topW = new Float64Array(4);
  topIdx = new Int32Array(4);
  readonly byGroup = new Map<number, GroupHeap>();
  constructor(readonly key: number) {}

  list(h: GroupHeap): void {
    const k = this.heaps.length;
    if (k === this.topW.length) {
      const grow = <T extends Float64Array | Int32Array>(a: T, b: T): T => {
        b.set(a);
        return b;
      };
      this.topBase = grow(this.topBase, new Float64Array(2 * k));
      this.topW = grow(this.topW, new Float64Array(2 * k));
      this.topIdx = grow(this.topIdx, new Int32Array(2 * k));
    }
    h.slot = k;
    this.heaps.push(h);
    this.topW[k] = h.w;
  }

  unlist(h: GroupHeap): void {
    const last = this.heaps.pop()!;
    const k = h.slot;
    if (last !== h) {
      const j = last.slot;
      this.heaps[k] = last;
      last.slot = k;
      this.topBase[k] = this.topBase[j];
      this.topW[k] = this.topW[j];
      this.topIdx[k] = this.topIdx[j];
    }
    h.slot = -1;
  }
}

/** Empty buckets kept for reuse (least_conn moves members between the same few ratios). */
const KEEP_EMPTY = 64;

/** Steps after which a bucket folds `w * steps` into `base`, keeping every value an exact integer. */
const REBASE_AT = 2 ** 40;

export class SwrrCore implements AvailabilitySink {
  readonly n: number;
  readonly w: Float64Array;
  /** In a bucket: current = base + w * bucket.steps. Out: the frozen current itself. */
  readonly base: Float64Array;
  /** Bucket key of each member (in-flight/weight for least_conn, 0 for round robin). */
  readonly key: Float64Array;
  readonly inside: Uint8Array;
  readonly #group: Int32Array;
  readonly #pos: Int32Array;
  readonly #heapOf: (GroupHeap | undefined)[];
  readonly #bucketOf: (Bucket | undefined)[];
  readonly #buckets = new Map<number, Bucket>();
  /** Min-heap of buckets by key; empty buckets leave it lazily. */
  readonly #min: Bucket[] = [];
  readonly #rebaseAt: number;

  constructor(weights: ArrayLike<number>, rebaseAt = REBASE_AT) {
    const n = weights.length;
    this.n = n;
    this.w = new Float64Array(n);
    this.base = new Float64Array(n);
    this.key = new Float64Array(n);
    this.inside = new Uint8Array(n);
    this.#group = new Int32Array(n);
    this.#pos = new Int32Array(n);
    this.#heapOf = new Array(n).fill(undefined);
    this.#bucketOf = new Array(n).fill(undefined);
    this.#rebaseAt = rebaseAt;
    const groups = new Map<number, number>();
    for (let i = 0; i < n; i++) {
      const w = weights[i];
      this.w[i] = w;
      let g = groups.get(w);
      if (g === undefined) groups.set(w, g = groups.size);
      this.#group[i] = g;
    }
  }

  /** Puts member i (out) into the bucket of `key[i]`, keeping its current. */
  insert(i: number): void {
    const k = this.key[i];
    let b = this.#buckets.get(k);
    if (b === undefined) {
      b = new Bucket(k);
      this.#buckets.set(k, b);
    }
    if (!b.inMin) this.#pushMin(b);
    const g = this.#group[i];
    let h = b.byGroup.get(g);
    if (h === undefined) {
      h = new GroupHeap(this.w[i], g);
      b.byGroup.set(g, h);
    }
    this.base[i] -= this.w[i] * b.steps;
    if (h.items.length === 0) b.list(h);
    const items = h.items;
    items.push(i);
    this.#siftUp(items, items.length - 1);
    this.#setTop(b, h);
    this.#heapOf[i] = h;
    this.#bucketOf[i] = b;
    b.size++;
    b.total += this.w[i];
    this.inside[i] = 1;
  }

  /** Takes member i out of its bucket, freezing its current in `base[i]`. */
  remove(i: number): void {
    const h = this.#heapOf[i]!;
    const b = this.#bucketOf[i]!;
    const items = h.items;
    const p = this.#pos[i];
    const last = items.pop()!;
    if (last !== i) {
      items[p] = last;
      this.#pos[last] = p;
      this.#siftDown(items, p);
      this.#siftUp(items, this.#pos[last]);
    }
    if (items.length === 0) b.unlist(h);
    else this.#setTop(b, h);
    b.size--;
    b.total -= this.w[i];
    this.base[i] += this.w[i] * b.steps;
    this.#heapOf[i] = undefined;
    this.#bucketOf[i] = undefined;
    this.inside[i] = 0;
  }

  /**
   * The member the next pick chooses: the largest current after this pick's gain in the
   * lowest non-empty bucket, the lowest index on ties; -1 when no member is inside.
   */
  peek(): number {
    const b = this.#lowest();
    if (b === undefined) return -1;
    const s = b.steps + 1;
    const count = b.heaps.length;
    const topBase = b.topBase;
    const topW = b.topW;
    const topIdx = b.topIdx;
    let best = -1;
    let bestV = 0;
    for (let k = 0; k < count; k++) {
      const i = topIdx[k];
      const v = topBase[k] + topW[k] * s;
      if (best < 0 || v > bestV || (v === bestV && i < best)) {
        best = i;
        bestV = v;
      }
    }
    return best;
  }

  /** Completes the pick of member i, which `peek` returned: its bucket gains, i pays the total. */
  commit(i: number): void {
    const b = this.#bucketOf[i]!;
    b.steps++;
    this.base[i] -= b.total;
    const h = this.#heapOf[i]!;
    this.#siftDown(h.items, this.#pos[i]);
    this.#setTop(b, h);
    if (b.steps >= this.#rebaseAt) this.#rebase(b);
  }

  /**
   * Starts the sequence a random number of picks in (every member inserted), so that the
   * balancers of many pools do not all begin with their first member.
   */
  skipRandom(random: () => number): void {
    for (let k = Math.floor(random() * this.n); k > 0; k--) this.commit(this.peek());
  }

  /**
   * Takes the members of `set` (found by `index`) that are in a bucket out of it, pushing each
   * onto `out`, so that a retry's pick skips the members already tried.
   */
  takeOut(set: ReadonlySet<unknown>, index: ReadonlyMap<unknown, number>, out: number[]): void {
    for (const m of set) {
      const i = index.get(m);
      if (i !== undefined && this.inside[i] === 1) {
        this.remove(i);
        out.push(i);
      }
    }
  }

  /** AvailabilitySink: an unavailable member leaves its bucket. */
  markDown(i: number): void {
    if (this.inside[i] === 1) this.remove(i);
  }

  /** AvailabilitySink: an available member returns to the bucket of its key. */
  markUp(i: number): void {
    if (this.inside[i] === 0) this.insert(i);
  }

  /** The current of member i as nginx would hold it now. */
  current(i: number): number {
    const b = this.#bucketOf[i];
    return b === undefined ? this.base[i] : this.base[i] + this.w[i] * b.steps;
  }

  #lowest(): Bucket | undefined {
    const min = this.#min;
    while (min.length > 0) {
      const b = min[0];
      if (b.size > 0) return b;
      b.inMin = false;
      if (this.#buckets.size > KEEP_EMPTY) this.#buckets.delete(b.key);
      this.#popMin();
    }
    return undefined;
  }

  #rebase(b: Bucket): void {
    for (const h of b.heaps) {
      const add = h.w * b.steps;
      for (const i of h.items) this.base[i] += add;
      this.#setTop(b, h);
    }
    b.steps = 0;
  }

  #setTop(b: Bucket, h: GroupHeap): void {
    const i = h.items[0];
    b.topIdx[h.slot] = i;
    b.topBase[h.slot] = this.base[i];
  }

  #before(a: number, b: number): boolean {
    const x = this.base[a];
    const y = this.base[b];
    return x > y || (x === y && a < b);
  }

  #siftUp(items: number[], p: number): void {
    const i = items[p];
    while (p > 0) {
      const q = (p - 1) >> 1;
      const j = items[q];
      if (!this.#before(i, j)) break;
      items[p] = j;
      this.#pos[j] = p;
      p = q;
    }
    items[p] = i;
    this.#pos[i] = p;
  }

  #siftDown(items: number[], p: number): void {
    const len = items.length;
    const i = items[p];
    for (;;) {
      let c = 2 * p + 1;
      if (c >= len) break;
      if (c + 1 < len && this.#before(items[c + 1], items[c])) c++;
      const j = items[c];
      if (!this.#before(j, i)) break;
      items[p] = j;
      this.#pos[j] = p;
      p = c;
    }
    items[p] = i;
    this.#pos[i] = p;
  }

  #pushMin(b: Bucket): void {
    b.inMin = true;
    const min = this.#min;
    let p = min.length;
    min.push(b);
    while (p > 0) {
      const q = (p - 1) >> 1;
      if (min[q].key <= b.key) break;
      min[p] = min[q];
      p = q;
    }
    min[p] = b;
  }

  #popMin(): void {
    const min = this.#min;
    const last = min.pop()!;
    if (min.length === 0) return;
    let p = 0;
    const len = min.length;
    for (;;) {
      let c = 2 * p + 1;
      if (c >= len) break;
      if (c + 1 < len && min[c + 1].key < min[c].key) c++;
      if (min[c].key >= last.key) break;
      min[p] = min[c];
      p = c;
    }
    min[p] = last;
  }
}
