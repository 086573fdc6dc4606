/**
 * Where Deno's own console warnings go in the long-running commands: the event log, as
 * `deno_warning` events, so that standard error stays JSON lines.
 *
 * One notice is dropped: `Deno.serve: request.signal aborts on successful responses (legacy
 * behavior)`, printed once per process after the first HTTP/2 request whose `request.signal` the
 * rapid-reset count (`server.limits.max_resets_per_second`) watched. The count only takes an abort
 * that comes before the answer, so the legacy behaviour changes nothing for it; the opt-out
 * (`--unstable-no-legacy-abort`) does not exist for compiled binaries (Deno 2.9.6's `denort`
 * always runs the legacy behaviour), so the notice would be noise in every log.
 */
import { log } from "../src/observe/mod.ts";

const LEGACY_ABORT = "Deno.serve: request.signal aborts on successful responses (legacy behavior)";

/** Whether `message` is a Deno notice scalwsd knows and does not log. */
export function silenced(message: string): boolean {
  return message.startsWith(LEGACY_ABORT);
}

/** Sends `console.warn` to the event log (see the module comment). */
export function warningsToEventLog(): void {
  console.warn = (...args: unknown[]) => {
    const message = args.map(String).join(" ");
    if (!silenced(message)) log("warn", "deno_warning", { message });
  };
}
