/**
 * The body pump: pulls a client's request body chunk by chunk and hands each chunk to the
 * caller's writer before pulling the next (a slow member slows the client down), checking the
 * length it was promised. The HTTP/1 client (`http1/write_request_body.ts`, plain or chunked) and the
 * FastCGI client (`fastcgi/fcgi_send.ts`, STDIN records) frame what it hands them. A failed pull,
 * a wrong length, the member's answer stopping the upload, or the response timeout passing
 * while the body still arrives are the client's failures, made by the caller's `clientError`.
 */

/** A body read chunk by chunk (http1's `BodyPull` is one). */
export interface PulledBody {
  read(): Promise<Uint8Array | null>;
  cancel(): void;
}

/** What the pump reads and sets on the connection it uploads on. */
export interface Uploading<B extends PulledBody> {
  /** The body being waited on, while a read is pending (the response timeout cancels it). */
  upload: B | null;
  /** The response timeout has passed. */
  readonly timedOut: boolean;
  /** The member has answered: the rest of the body is not sent. */
  readonly stopUpload: boolean;
}

/** Makes a client failure: the message, the error behind it, whether a timeout caused it. */
export type ClientError = (message: string, cause?: unknown, timeout?: boolean) => Error;

/** How one body is pumped. */
export interface PumpOptions {
  /** Exact bytes the body must have; -1 when unknown (chunked). */
  readonly length: number;
  /** Writes one non-empty chunk (framed as the protocol needs). */
  readonly write: (chunk: Uint8Array) => Promise<void>;
  readonly clientError: ClientError;
}

/**
 * Pumps `body` into `opts.write` until it ends; returns its length. On any failure the body is
 * cancelled; socket errors from `write` propagate as they are (the caller maps them).
 */
export async function pumpBody<B extends PulledBody>(
  conn: Uploading<B>,
  body: B,
  opts: PumpOptions,
): Promise<number> {
  const { length, clientError } = opts;
  let total = 0;
  let ok = false;
  try {
    for (;;) {
      conn.upload = body;
      let chunk: Uint8Array | null;
      try {
        chunk = await body.read();
      } catch (err) {
        if (conn.timedOut) {
          throw clientError("request body still arriving at the response timeout", err, true);
        }
        throw clientError("reading the request body failed", err);
      }
      conn.upload = null;
      if (conn.timedOut) {
        throw clientError("request body still arriving at the response timeout", undefined, true);
      }
      if (chunk === null) break;
      if (conn.stopUpload) throw clientError("upload stopped: the member has answered");
      // An empty chunk would end a chunked body early.
      if (chunk.length === 0) continue;
      total += chunk.length;
      if (length >= 0 && total > length) {
        throw clientError(`request body longer than its Content-Length ${length}`);
      }
      await opts.write(chunk);
    }
    if (total < length) throw clientError(`request body ended after ${total} of ${length} bytes`);
    ok = true;
    return total;
  } finally {
    conn.upload = null;
    if (!ok) body.cancel();
  }
}
