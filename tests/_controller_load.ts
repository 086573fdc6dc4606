/** Moved to `tests/_support/keep_alive_load.ts`; this file goes once nothing imports it. */
export * from "./_support/keep_alive_load.ts";
