/**
 * The admin API (Hono, `createAdminApp`) and the listeners that serve it and `/metrics`
 * (`AdminListeners`): status, pools and members, reloads, purges, limits, the console. It
 * reaches the server only through the `AdminTarget` interface.
 *
 * @module
 */

export { createAdminApp, SOURCE_HEADER } from "./app.ts";
export { AdminListeners, EarlyMetricsListener } from "./listeners.ts";
