/**
 * The member set of a pool: the immutable snapshot a request picks from, built once per
 * change (planning gives a `PlannedSet`, the pool adds its balancer) and swapped whole.
 * Only shapes: the pool (`pool.ts`) builds them, a request (`pool_request.ts`) keeps the one it
 * started with.
 *
 * @module
 */

import type { Member } from "./member.ts";
import type { Balancer } from "./types.ts";

/** A member set before its balancer is built: what planning produces. */
export interface PlannedSet {
  readonly members: readonly Member[];
  /** Affinity cookie value -> member. */
  readonly byAffinity: ReadonlyMap<string, Member>;
  readonly byAddress: ReadonlyMap<string, Member>;
}

/** One immutable member set of a pool; replaced whole, never edited. */
export interface MemberSet extends PlannedSet {
  readonly balancer: Balancer<Member>;
}
