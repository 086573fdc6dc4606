/**
 * Refusals of control operations (`reload`, `rollback`, `scale`, ...): an HTTP status the
 * control API answers with, a message, and for an invalid configuration every error found.
 */
import type { ConfigError } from "../config/mod.ts";

/** The statuses a control operation refuses with. */
export type ControlStatus = 400 | 404 | 409 | 413 | 501 | 503;

/** Raised for refusals of control operations: a status and a message. */
export class ControlError extends Error {
  override readonly name = "ControlError";
  readonly status: ControlStatus;
  /** Every problem found, `FILE: PATH: MESSAGE`; absent for a refusal with one reason. */
  readonly errors?: readonly string[];

  constructor(status: ControlStatus, message: string, options?: { errors?: readonly string[] }) {
    super(message);
    this.status = status;
    if (options?.errors !== undefined) this.errors = Object.freeze([...options.errors]);
  }
}

/** A reload refused because the configuration file is invalid: 400 with each error named. */
export function reloadRefused(err: ConfigError): ControlError {
  return new ControlError(400, err.message, { errors: err.errors.map((e) => `${err.file}: ${e}`) });
}
