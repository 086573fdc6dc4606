/**
 * One scalwsd process serving: `Server` builds a generation from the configuration (routes,
 * handlers, pools) and swaps it whole on reload, opens the listeners (plain, TLS directly or
 * relayed through loopback by SNI, HTTP/2 through `Deno.serve`), and its dispatcher takes each
 * request's `Session` from either front and runs it through the pipeline. Also the checks before
 * start (`preflight.ts`, open files) and the warnings of stored member lists. The admin API
 * reaches it through `AdminTarget`.
 *
 * @module
 */

export { openFilesAtStart, openFilesCheck } from "./open_files.ts";
export { eventLoopSliceAtStart } from "./time_slice.ts";
export { affinityKeyProblem, preflight } from "./preflight.ts";
export { Server } from "./server.ts";
export { storedListWarnings } from "./stored_lists.ts";
export { handshakeFailed } from "./tls_errors.ts";
