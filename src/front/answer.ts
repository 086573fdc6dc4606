/**
 * An answer the front writes without a Web `Response`: status, header pairs and a body of
 * bytes, a stream, or nothing. Handlers that proxy build one directly; any `Response` is
 * written too (a slower path for scalwsd's own small answers and files).
 */

/** Bytes backed by a plain ArrayBuffer. */
export type Bytes = Uint8Array<ArrayBuffer>;

/** A raw connection handed over after a 101 answer, with what its peer sent after the head. */
export interface Upgraded {
  readonly conn: Pick<Deno.Conn, "read" | "write" | "close">;
  readonly leftover: Uint8Array;
}

/**
 * A body pulled chunk by chunk without a stream (a member's body straight from its
 * connection): one `read` at a time; null at the clean end; a rejection when it broke.
 */
export interface PullBody {
  read(): Promise<Uint8Array | null>;
  /** When present: each chunk a view valid only until the next call (nothing copied). */
  readView?(): Promise<Uint8Array | null>;
  /** When present: the body as a stream made straight from its source (for Deno.serve). */
  stream?(): ReadableStream<Uint8Array>;
  cancel(): void;
}

/** A `ReadableStream` over `pull`, for writers that need one (Deno.serve). */
export function pullStream(pull: PullBody): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      const chunk = await pull.read();
      if (chunk === null) c.close();
      else c.enqueue(chunk);
    },
    cancel() {
      pull.cancel();
    },
  }, { highWaterMark: 0 });
}

export class FrontAnswer {
  constructor(
    readonly status: number,
    /** Lower-case names. `content-length` is honoured for streams and HEAD; framing is ours. */
    readonly headers: [string, string][],
    /**
     * A `Uint8Array` that may be a view of a buffer reused after the answer is written, a
     * stream or a `PullBody` of chunks (each written before the next is pulled), or null.
     */
    readonly body: Uint8Array | ReadableStream<Uint8Array> | PullBody | null,
    /** Called once the answer was written (true) or failed (false). */
    readonly onWritten: ((ok: boolean) => void) | null = null,
  ) {}
}

/** What a front request is answered with. */
export type Answer = Response | FrontAnswer;

/** A body of an answer a handler makes: bytes, a stream, chunks pulled one by one, or none. */
export type AnswerBody = Uint8Array | ReadableStream<Uint8Array> | PullBody | null;

/**
 * How a front's answers are made: one call for every handler, each front keeping its own fast
 * path (the session says which form is its). `headers` are lower-case pairs the callee may edit;
 * `head`: the request was a HEAD; `onWritten` is honoured by scalwsd's own front only.
 */
export interface AnswerForm {
  make(
    status: number,
    headers: [string, string][],
    body: AnswerBody,
    head: boolean,
    onWritten: ((ok: boolean) => void) | null,
  ): Answer;
}

/** scalwsd's own HTTP/1.1 front: status, pairs and bytes, no Web objects. */
export const FRONT_FORM: AnswerForm = {
  make(status, headers, body, _head, onWritten) {
    return new FrontAnswer(status, headers, body, onWritten);
  },
};

/**
 * Deno.serve: a `Response`. A byte body goes without its `content-length` (Deno.serve writes
 * it; one header fewer to convert) and without the bytes for a HEAD; a lone `content-type` is
 * passed as a plain object (Deno.serve's fast path).
 */
export const WEB_FORM: AnswerForm = {
  make(status, headers, body, head) {
    let init: BodyInit | null;
    if (body === null) init = null;
    else if (body instanceof Uint8Array) {
      if (head) init = null;
      else {
        init = body as Uint8Array<ArrayBuffer>;
        for (let i = 0; i < headers.length; i++) {
          if (headers[i][0] === "content-length") {
            headers.splice(i, 1);
            break;
          }
        }
      }
    } else if (body instanceof ReadableStream) init = body;
    else init = body.stream !== undefined ? body.stream() : pullStream(body);
    return new Response(init, {
      status,
      headers: headers.length === 1 && headers[0][0] === "content-type"
        ? { "content-type": headers[0][1] }
        : headers,
    });
  },
};

/** A Deno.serve answer from any answer (a `FrontAnswer` made for scalwsd's own front too). */
export function webResponse(a: Answer): Response {
  if (a instanceof Response) return a;
  const body = a.body;
  const init = body === null || body instanceof Uint8Array || body instanceof ReadableStream
    ? body
    : body.stream !== undefined
    ? body.stream()
    : pullStream(body);
  return new Response(init as BodyInit | null, { status: a.status, headers: a.headers });
}
