/** Builds the balancing policy a pool's `balance` setting names. */

import type { PoolConfig } from "../../config/mod.ts";
import type { Random } from "../../base/mod.ts";
import type { Balancer, Candidate } from "../types.ts";
import { FailoverBalancer } from "./failover.ts";
import { HashBalancer } from "./hash.ts";
import { LeastConnBalancer } from "./least_conn.ts";
import { RoundRobinBalancer } from "./round_robin.ts";

export { FailoverBalancer } from "./failover.ts";
export { HashBalancer, normalizeClientIp } from "./hash.ts";
export { LeastConnBalancer } from "./least_conn.ts";
export { RoundRobinBalancer } from "./round_robin.ts";

/** A balancer from `createBalancer`: both optional hooks of `Balancer` are present. */
export interface PolicyBalancer<M extends Candidate> extends Balancer<M> {
  inflightChanged(member: M): void;
  invalidate(): void;
}

/**
 * The balancer for `kind` over `members` (kept in their order; the list must not change
 * afterwards: build a new balancer for a new set). `random` starts round robin sequences at a
 * random point; without it they start like nginx's.
 */
export function createBalancer<M extends Candidate>(
  kind: PoolConfig["balance"],
  members: readonly M[],
  random?: Random,
): PolicyBalancer<M> {
  switch (kind) {
    case "round_robin":
      return new RoundRobinBalancer(members, random);
    case "least_conn":
      return new LeastConnBalancer(members, random);
    case "hash":
      return new HashBalancer(members, random);
    case "failover":
      return new FailoverBalancer(members);
  }
}
