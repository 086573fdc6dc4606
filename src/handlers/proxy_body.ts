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
  source(): Uint8Array | ReadableStream<Uint8Array> | null {
    if (this.upload !== null) return this.upload.stream();
    return this.bytes;
  }

  /**
   * The status for a failure that was the client's (413 too large, 400 aborted, 504 upload
   * still waiting when the response timeout passed), or 0 when it was the member's.
   */
  clientFailure(err: AttemptError): number {
    const u = this.upload;
    if (u === null) return 0;
    if (u.failure === "too_large") return 413;
    if (u.failure === "aborted") return 400;
    if (err.timeout && !u.done) return 504;
    return 0;
  }
}

const NO_BODY = new PreparedBody(null, null, 0, true);
const EMPTY_BODY = new PreparedBody(new Uint8Array(0), null, 0, true);

/**
 * Prepares the body: 413 before reading when Content-Length is over the limit; small bodies
 * with a length are read into memory only when a retry is possible; everything else streams.
 */
export function prepareBody(
  req: Request,
  maxBody: number,
  retryable: boolean,
): PreparedBody | number | Promise<PreparedBody | number> {
  if (req.body === null) return NO_BODY;
  const cl = req.headers.get("content-length");
  const length = cl === null ? -1 : Number(cl);
  if (length > maxBody) return 413;
  if (length === 0) return EMPTY_BODY;
  if (retryable && length > 0 && length <= REPLAY_LIMIT) return keepSmallBody(req.body, length);
  return new PreparedBody(null, new ClientBody(req.body, maxBody), length, false);
}

async function keepSmallBody(
  body: ReadableStream<Uint8Array>,
  length: number,
): Promise<PreparedBody | number> {
  const bytes = await readSmallBody(body, length);
  if (bytes === "too_large") return 413;
  if (bytes === "aborted" || bytes === null) return 400;
  return new PreparedBody(bytes, null, length, true);
}

/** Whether this request carries no body at all (no allocation for the common GET). */
export function isNoBody(b: PreparedBody): boolean {
  return b === NO_BODY;
}
