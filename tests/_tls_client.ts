/** Moved to `tests/_support/tls_client.ts`; this file goes once nothing imports it. */
export * from "./_support/tls_client.ts";
