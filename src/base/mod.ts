/**
 * What every room may use: the clock (`clock.ts`), the random source (`random.ts`), a lock,
 * plain-text answers (`plain.ts`), atomic file writes, the hop-by-hop field names, the one
 * restart-backoff policy that application workers and the controller's instances share, glibc's
 * calls that Deno does not expose (`libc.ts`), the `405` of a router (`method_not_allowed.ts`), the percent-decoding of unreserved characters in paths
 * (`percent.ts`), small `/proc` files read without `--allow-all`, SIGUSR1 without Deno's debugger, and no debug
 * surface opened from the environment (`debug_env.ts`). It imports no other room.
 *
 * @module
 */

export { ensureDir, writeFileAtomic } from "./atomic_file.ts";
export { dropDebugEnv } from "./debug_env.ts";
export { type Clock, systemClock } from "./clock.ts";
export { HOP_BY_HOP } from "./hop_by_hop.ts";
export { MAP_SYMBOLS, type MapCalls, openLibc } from "./libc.ts";
export { Lock } from "./lock.ts";
export { AF_INET, AF_INET6, openDescriptors, type SocketCalls, socketCalls } from "./socket_fds.ts";
export { allowedMethods, methodNotAllowed, type RouteEntry } from "./method_not_allowed.ts";
export { decodeUnreserved } from "./percent.ts";
export { readProcFile } from "./proc_file.ts";
export { plain, sizeOf } from "./plain.ts";
export type { Random } from "./random.ts";
export { onFailure, RestartWindow } from "./restart_backoff.ts";
export { blockUsr1, Usr1Watch } from "./usr1.ts";
