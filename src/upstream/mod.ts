/**
 * Pools and their decisions: a `Pool` chooses a member for each try (`balance/`: one policy per
 * file), hears each outcome (passive and active health, slow start), and says whether to retry
 * (`retry_policy.ts`, `PoolRequest`); members with their connections and TLS settings, session
 * affinity, the `backends:` selector over several pools, and the `PoolRegistry` that keeps pools
 * and single-address connections across reloads. It speaks no protocol itself (`http1/`,
 * `fastcgi/`).
 *
 * @module
 */

export { addressKey, type AddressRuntime, fastcgiKey } from "./address_conns.ts";
export { AFFINITY_KEY_MIN_BYTES, AffinityKey, keyLength } from "./affinity.ts";
export { BackendSelector } from "./backends.ts";
export { Member } from "./member.ts";
export type { PemReader } from "./member_tls.ts";
export { Outcome, Pool, type PoolDeps } from "./pool.ts";
export { type MemberTry, PoolRequest } from "./pool_request.ts";
export { PoolRegistry } from "./registry.ts";
export { failureKind } from "./retry_policy.ts";
