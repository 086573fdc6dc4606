/**
 * The request body as the proxy sends it, prepared once for all attempts of a request
 * (`PreparedBody`): none, bytes kept for a replay, or a stream sent once; and how a failed attempt
 * tells whether the client caused it.
 *
 * @module
 */

import type { BodyPull } from "../http1/mod.ts";
import { type ClientRequest, requestBody } from "../pipeline/mod.ts";
import { ClientBody, readSmallBody, REPLAY_LIMIT } from "./client_body.ts";

/** What the HTTP/1 client needs to know of an error to tell whether the client caused it. */
interface AttemptError {
  readonly timeout: boolean;
}

/**
 * The request body prepared for one or more attempts: nothing, bytes kept for replay, or a
 * stream sent once.
 */
export class PreparedBody {
  constructor(
    /** Kept bytes (replayable) or null. */
    readonly bytes: Uint8Array | null,
    /** The streamed upload, or null. */
    readonly upload: ClientBody | null,
    /** Content-Length, or -1 for a body without a length (sent chunked). */
    readonly length: number,
    readonly replayable: boolean,
  ) {}

  /** The body for the next attempt. */
  source(): Uint8Array | BodyPull | null {
    return this.upload ?? this.bytes;
  }

  /**
   * The status for a failure that was the client's (413 too large, 400 aborted, 504 upload
   * still waiting when the response timeout passed), or 0 when it was the member's.
   */
  clientFailure(err: AttemptError): number {
    const u = this.upload;
    if (u === null) return 0;
    if (u.failure === "too_large") return 413;
    if (u.failure === "stalled") return 408;
    // A client error with a timeout means the upload was still arriving at the response
    // timeout; the timeout cancels the upload, which then reads as ended or aborted.
    if (err.timeout) return 504;
    if (u.failure === "aborted") return 400;
    return 0;
  }
}

const NO_BODY = new PreparedBody(null, null, 0, true);
const EMPTY_BODY = new PreparedBody(new Uint8Array(0), null, 0, true);

/**
 * How a handler takes request bodies. Build the rules once per handler (a route's `max_body`,
 * with and without a retry possible) and pass one per request: nothing is allocated for it.
 */
export interface BodyRule {
  /** The route's `max_body`: longer bodies get 413. */
  readonly maxBody: number;
  /** A retry is possible: a small body with a length is kept in memory to be sent again. */
  readonly keep: boolean;
  /** Longest wait in ms for a kept body (the response timeout; 504 after it), 0: none. */
  readonly keepWithin: number;
}

/**
 * Prepares the body of `ex`: 413 before reading when Content-Length is over the limit; small
 * bodies with a length are kept in memory when `rule` allows a retry; everything else streams.
 * A chunk later than `ex.bodyTimeout` (`body_read_timeout`, 0: none) ends the upload with 408.
 */
export function prepareBody(
  ex: { readonly req: ClientRequest; readonly bodyTimeout: number },
  rule: BodyRule,
): PreparedBody | number | Promise<PreparedBody | number> {
  const req = ex.req;
  const body = requestBody(req);
  if (body === null) return NO_BODY;
  const maxBody = rule.maxBody;
  const gapMs = ex.bodyTimeout;
  const cl = req.headers.get("content-length");
  const length = cl === null ? -1 : Number(cl);
  if (length > maxBody) return 413;
  if (length === 0) return EMPTY_BODY;
  if (rule.keep && length > 0 && length <= REPLAY_LIMIT) {
    return keepSmallBody(body, length, rule.keepWithin, gapMs);
  }
  return new PreparedBody(null, new ClientBody(body, maxBody, gapMs), length, false);
}

async function keepSmallBody(
  body: BodyPull,
  length: number,
  timeoutMs: number,
  gapMs: number,
): Promise<PreparedBody | number> {
  const bytes = await readSmallBody(body, length, timeoutMs, gapMs);
  if (bytes === "too_large") return 413;
  if (bytes === "stalled") return 408;
  if (bytes === "timeout") return 504;
  if (bytes === "aborted" || bytes === null) return 400;
  return new PreparedBody(bytes, null, length, true);
}

/** Whether this request carries no body at all (no allocation for the common GET). */
export function isNoBody(b: PreparedBody): boolean {
  return b === NO_BODY;
}
