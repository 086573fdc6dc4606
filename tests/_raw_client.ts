/** Moved to `tests/_support/raw_conn.ts`; this file goes once nothing imports it. */
export * from "./_support/raw_conn.ts";
