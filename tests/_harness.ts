/**
 * Moved to `tests/_support/` (see `mod.ts` there); this file goes once nothing imports it.
 * `startScalwsd` and the members now also close with `await using`.
 */
export * from "./_support/scalwsd.ts";
export * from "./_support/members.ts";
export * from "./_support/http.ts";
export type { Scalwsd as Running } from "./_support/scalwsd.ts";
