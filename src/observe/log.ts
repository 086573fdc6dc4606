/**
 * The event log: one JSON object per line on standard error. The only place, with the access
 * log, that writes to the console.
 */

export type Level = "debug" | "info" | "warn" | "error";

const enc = new TextEncoder();

/** Sink for tests: when set, lines go here instead of stderr. */
let sink: ((line: string) => void) | null = null;

export function setLogSink(fn: ((line: string) => void) | null): void {
  sink = fn;
}

export function log(level: Level, event: string, fields: Record<string, unknown> = {}): void {
  const line = JSON.stringify({ time: new Date().toISOString(), level, event, ...fields });
  if (sink) sink(line);
  else Deno.stderr.writeSync(enc.encode(line + "\n"));
}
