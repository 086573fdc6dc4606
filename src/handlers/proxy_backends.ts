/**
 * `backends:` on a route: the weighted split of requests over several pools
 * (`upstream/backends.ts` chooses), each request then handled by its pool's proxy; status entries
 * answer themselves.
 *
 * @module
 */

import type { Answer } from "../front/mod.ts";
import type { BackendEntry } from "../config/mod.ts";
import type { Exchange, Handler } from "../pipeline/mod.ts";
import { plain } from "../base/mod.ts";
import { BackendSelector } from "../upstream/mod.ts";
import type { PoolProxyHandler } from "./proxy_pool.ts";

/**
 * `backends`: a weighted split per request by smooth weighted round robin. A pool without
 * members is skipped while another backend has members; status entries answer themselves and
 * never count as upstream failures.
 */
export class BackendsHandler implements Handler {
  private readonly selector: BackendSelector;
  private readonly hasMembers = (pool: string) =>
    (this.pools.get(pool)?.pool.set.members.length ?? 0) > 0;

  constructor(
    entries: readonly BackendEntry[],
    /** The handler of each pool named by an entry. */
    private readonly pools: ReadonlyMap<string, PoolProxyHandler>,
  ) {
    this.selector = new BackendSelector(entries);
  }

  handle(ex: Exchange): Answer | Promise<Answer> {
    const e = this.selector.pick(this.hasMembers);
    if (e.pool !== undefined) return this.pools.get(e.pool)!.handle(ex);
    const status = e.status!;
    ex.answered(status);
    return plain(status, `${status} answered by the route's backends`);
  }
}
