/** Where an exchange with a member failed. */
export type UpstreamPhase = "connect" | "write" | "head" | "body";

/**
 * What went wrong. `client` is a failure of the request body the caller supplied (its stream
 * threw, ended short or ran long, or was still waiting when the response timeout passed): not
 * the member's fault; `cause` holds the stream's error.
 */
export type UpstreamErrorKind =
  | "refused"
  | "timeout"
  | "reset"
  | "malformed"
  | "closed"
  | "tls"
  | "client";

/** A failed exchange with a member; everything `send` and response bodies throw is one of these. */
export class UpstreamError extends Error {
  override readonly name = "UpstreamError";
  readonly phase: UpstreamPhase;
  readonly kind: UpstreamErrorKind;
  /** True when a timeout ended the attempt. */
  readonly timeout: boolean;
  /** True when the whole request had been written. */
  readonly written: boolean;

  constructor(
    phase: UpstreamPhase,
    kind: UpstreamErrorKind,
    message: string,
    written: boolean,
    timeout = false,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.phase = phase;
    this.kind = kind;
    this.written = written;
    this.timeout = timeout;
  }
}

/** A malformed response (phase `head` unless told). */
export function malformed(message: string, phase: UpstreamPhase = "head"): UpstreamError {
  return new UpstreamError(phase, "malformed", message, true);
}

/**
 * A failure of the request body the caller supplied (phase `write`, kind `client`): its pull
 * failed, it ran short or long, or it was still arriving when `timeout` ended the attempt.
 */
export function clientError(message: string, cause?: unknown, timeout = false): UpstreamError {
  return new UpstreamError("write", "client", message, false, timeout, cause);
}

const IO_ERRORS: ReadonlySet<unknown> = new Set(Object.values(Deno.errors));

/** True for the runtime's I/O errors (`Deno.errors.*`), false for bugs such as a TypeError. */
export function isIoError(err: unknown): boolean {
  return err instanceof Error && IO_ERRORS.has(err.constructor);
}

/**
 * Maps a read or write failure on an established connection to an `UpstreamError`. Anything
 * that is neither an I/O error nor caused by a timeout is a bug and is returned unchanged.
 */
export function ioError(
  phase: UpstreamPhase,
  err: unknown,
  written: boolean,
  timedOut: boolean,
  what: string,
): unknown {
  if (err instanceof UpstreamError) return err;
  if (timedOut) {
    return new UpstreamError(phase, "timeout", `${what} timed out`, written, true);
  }
  if (!isIoError(err)) return err;
  const kind = err instanceof Deno.errors.InvalidData ? "tls" : "reset";
  return new UpstreamError(phase, kind, `${what} failed: ${String(err)}`, written, false, err);
}
