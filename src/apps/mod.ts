/**
 * Supervised applications (`applications:` in the configuration): worker processes under a
 * wrapper that leaves no orphan, each application's worker pool with rolling reloads, the
 * `AppSupervisor` kept across reloads, and PHP-FPM status polling. It starts and watches
 * processes; requests reach them through pools.
 *
 * @module
 */

export { appPoolName, AppSupervisor, type AppView } from "./supervisor.ts";
