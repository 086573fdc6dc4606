/**
 * Failed TLS handshakes in the event log: their reason in a few stable words (`tlsReason`), logged
 * within a budget per window (`LogBudget`) so that a flood of them costs a few lines, and counted.
 *
 * @module
 */

import { log } from "../observe/mod.ts";

/**
 * A budget of log lines per window: a flood of failing handshakes (a scanner, a client that
 * distrusts the certificate) costs a few lines, and what was left out is counted. Pure: the
 * caller passes the time.
 */
export class LogBudget {
  private windowStart = -Infinity;
  private used = 0;
  /** Lines left out in the current window. */
  private dropped = 0;

  constructor(
    /** Lines per window; default 10. */
    private readonly lines = 10,
    /** Window length in ms; default 10 s. */
    private readonly window = 10_000,
  ) {}

  /**
   * Whether a line may be written at `now` (ms). `suppressed` is set to the number of lines
   * left out in the window that just ended (0 when none), for the next line to report.
   */
  take(now: number): boolean {
    if (now - this.windowStart >= this.window) {
      this.suppressed = this.dropped;
      this.windowStart = now;
      this.used = 0;
      this.dropped = 0;
    }
    if (this.used < this.lines) {
      this.used++;
      return true;
    }
    this.dropped++;
    return false;
  }

  /** Lines left out in the window before the current one. */
  suppressed = 0;
}

/** What rustls says, without the error class name Deno puts in front. */
export function tlsReason(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/^[A-Za-z]+: /, "");
}

const handshakes = new LogBudget();

/** What `handshakeFailed` logs. */
export interface HandshakeFailure {
  readonly listener: string;
  readonly peer: string;
  /** The SNI name ("" for none), null when unknown. */
  readonly sni: string | null;
  readonly err: unknown;
}

/**
 * Logs a failed TLS handshake (`tls_handshake_failed`, level warn) with the reason the TLS
 * library gave; at most 10 lines per 10 s for the process, the rest counted in `suppressed`.
 */
export function handshakeFailed(f: HandshakeFailure, now = performance.now()): void {
  if (!handshakes.take(now)) return;
  const fields: Record<string, unknown> = {
    listener: f.listener,
    peer: f.peer,
    reason: tlsReason(f.err),
  };
  if (f.sni !== null) fields.sni = f.sni;
  if (handshakes.suppressed > 0) {
    fields.suppressed = handshakes.suppressed;
    handshakes.suppressed = 0;
  }
  log("warn", "tls_handshake_failed", fields);
}
