/**
 * The HTTP response cache (RFC 9111) as its handler (`handlers/cached.ts`) uses it: the
 * process's one `Cache` (store with LRU eviction, miss collapsing, result counters) and the
 * rules it applies: cache keys, Cache-Control and CDN-Cache-Control, storability, freshness and
 * age, validators and conditional requests, Vary, ranges, invalidation and purge requests, the
 * Cache-Status field. It sends no request to a member itself.
 *
 * @module
 */

export {
  BYPASS,
  Cache,
  CacheCounters,
  COLLAPSED,
  HIT,
  hitRatio,
  MISS,
  type Result,
  RESULTS,
  REVALIDATED,
  STALE,
} from "./cache.ts";
export { type CacheControl, NO_CACHE_CONTROL, parseCacheControl } from "./cache_control.ts";
export { cacheKey, keyHost } from "./cache_key.ts";
export { type Forward, forwardStatus, hitStatus } from "./cache_status.ts";
export { NOT_MODIFIED_HEADERS, notModified } from "./conditional.ts";
export { DiskStore, ownBody } from "./disk_store.ts";
export { type Bytes, Entry } from "./entry.ts";
export { ForwardHeaders } from "./forward_headers.ts";
export {
  clientRevalidates,
  currentAge,
  freshnessLifetime,
  inStaleWindow,
  parseAge,
} from "./freshness.ts";
export { parseHttpDate } from "./http_date.ts";
export { invalidates, sameHostTarget } from "./invalidation.ts";
export { parsePurge, purgeOfArgs } from "./purge_request.ts";
export type { PurgeTarget } from "./store.ts";
export { parseRange } from "./range.ts";
export { selects, updatedHeaders, validators, withMemberDate } from "./revalidation.ts";
export { storability, UNKEYED_REFLECTED } from "./storable.ts";
export { parseTargeted } from "./targeted.ts";
export { varyMatches, varyValues } from "./vary.ts";
