/** One request/response exchange with a member over a pooled connection. */

import { BODY_CHUNKED, BODY_CLOSE, BODY_LENGTH, BodySource } from "./read_response_body.ts";
import { ChunkedDecoder, findHeadEnd } from "../wire/mod.ts";
import { RESPONSE_CHUNKED } from "./read_chunked_response.ts";
import type { ConnPool } from "./conn_pool.ts";
import type { Http1Conn } from "./member_conn.ts";
import { COALESCE_LIMIT, writeAll, writeRest, writeStreamBody } from "./write_request_body.ts";
import { buildRequestHead, requestFraming } from "./write_request_head.ts";
import { MAX_HEAD, parseResponseHead, type ResponseHead } from "./parse_response_head.ts";
import { mayResendStale } from "./stale.ts";
import { asPull } from "./stream_pull.ts";
import type { Bytes, OutboundRequest, SendOptions, UpstreamResponse } from "./types.ts";
import { ioError, isIoError, malformed, UpstreamError } from "./upstream_error.ts";
import { watchdog } from "./watchdog.ts";

/** Content-Length bodies up to this size are read whole and returned as a `Uint8Array`. */
export const SMALL_BODY = 65536;
/** Most interim (1xx) responses skipped before the final one. */
const MAX_INTERIM = 16;
/** Smallest free space offered to a read. */
const MIN_READ = 4096;

const PHASE_WRITE = 0;
const PHASE_HEAD = 1;
const PHASE_BODY = 2;

const EMPTY = new Uint8Array(0);
const chunkSpans: number[] = [];

/**
 * Sends `req` to the pool's member and resolves at the response head (small bodies included).
 * A request that fails with EOF or reset before any response byte on a reused connection is
 * sent once more on a fresh connection (see `mayResendStale`), adding 1 to
 * `opts.stats.staleResends`. Rejects with `UpstreamError` only.
 */
export async function send(
  pool: ConnPool,
  req: OutboundRequest,
  opts: SendOptions,
): Promise<UpstreamResponse> {
  const timing = opts.timing;
  const start = timing === undefined ? 0 : performance.now();
  let connect = 0;
  let conn = pool.acquire();
  let resent = false;
  for (;;) {
    if (conn === null) {
      const c0 = timing === undefined ? 0 : performance.now();
      conn = await pool.open(opts.connectTimeout);
      if (timing !== undefined) connect += performance.now() - c0;
    }
    const reused = conn.idleFor >= 0;
    conn.sent = 0;
    conn.stopUpload = false;
    conn.received = 0;
    let phase = PHASE_WRITE;
    try {
      // Request head, with a small byte body copied behind it: one write.
      const body = req.body;
      const framing = requestFraming(req.method, body, req.bodyLength);
      const out = conn.out;
      let n = buildRequestHead(out, req.method, req.target, req.head, framing);
      const coalesce = body instanceof Uint8Array && body.length <= COALESCE_LIMIT;
      if (coalesce && body.length > 0) {
        out.ensure(n + body.length, n);
        out.buf.set(body, n);
        n += body.length;
      }
      const bytes = out.buf.subarray(0, n);
      const k = await conn.socket.write(bytes);
      conn.sent += k;
      if (k < n) await writeRest(conn, bytes, k);
      watchdog.arm(conn, opts.responseTimeout);
      let answer: Promise<ResponseHead> | null = null;
      if (body !== null && !coalesce) {
        // Listen while uploading, as nginx does: a member may answer before it has the
        // whole body (413, 401, a redirect), and then the rest is not sent.
        answer = readHead(conn, req.head.upgrade, opts.onInterim);
        const writing = body instanceof Uint8Array
          ? writeAll(conn, body)
          : writeStreamBody(conn, asPull(body), framing);
        const early = await uploadWhileListening(conn, writing, answer);
        if (early !== null) return cutShort(pool, conn, early, req, opts);
      }

      phase = PHASE_HEAD;
      const head = await (answer ?? readHead(conn, req.head.upgrade, opts.onInterim));
      if (timing !== undefined) {
        timing.upstreamConnect = connect / 1000;
        timing.upstreamHeader = (performance.now() - start) / 1000;
      }
      // Not awaited: a small body still to be read cleans up after itself.
      return respond(pool, conn, head, req, opts);
    } catch (err) {
      watchdog.disarm(conn);
      pool.release(conn, false);
      const e = toUpstreamError(err, phase, conn);
      if (!(e instanceof UpstreamError)) throw e; // a bug, not the member
      if (
        !resent && reused && conn.received === 0 && !e.timeout &&
        (e.kind === "closed" || e.kind === "reset") &&
        mayResendStale(req.method, isBodyless(req), conn.sent > 0, conn.idleFor)
      ) {
        resent = true;
        if (opts.stats !== undefined) opts.stats.staleResends++;
        conn = null;
        continue;
      }
      throw e;
    }
  }
}

function isBodyless(req: OutboundRequest): boolean {
  const body = req.body;
  return body === null || (body instanceof Uint8Array ? body.length === 0 : req.bodyLength === 0);
}

/** The `UpstreamError` for a failure in `phase`; a bug's error comes back unchanged. */
function toUpstreamError(err: unknown, phase: number, conn: Http1Conn): unknown {
  if (err instanceof UpstreamError) return err;
  if (phase === PHASE_WRITE) {
    return ioError("write", err, false, conn.timedOut, "writing the request");
  }
  return ioError(
    phase === PHASE_HEAD ? "head" : "body",
    err,
    true,
    conn.timedOut,
    phase === PHASE_HEAD ? "waiting for the response head" : "reading the response body",
  );
}

const WROTE = 0;
const WRITE_FAILED = 1;
const ANSWERED = 2;
const NO_ANSWER = 3;

function wrote(): number {
  return WROTE;
}
function writeFailed(): number {
  return WRITE_FAILED;
}
function answered(): number {
  return ANSWERED;
}
function noAnswer(): number {
  return NO_ANSWER;
}

/**
 * Waits for the body's `writing` while `answer` (the response head read, started before it)
 * is pending. Returns the head when the member gave its final answer before taking the whole
 * body (the upload stops there), or null when the body was all sent (the caller then awaits
 * `answer`). A write failure is thrown, unless the member answered before it.
 */
async function uploadWhileListening(
  conn: Http1Conn,
  writing: Promise<void>,
  answer: Promise<ResponseHead>,
): Promise<ResponseHead | null> {
  const w = writing.then(wrote, writeFailed);
  const a = answer.then(answered, noAnswer);
  const first = await Promise.race([w, a]);
  if (first === WROTE) return null;
  if (first === WRITE_FAILED) {
    let failure: unknown;
    try {
      await writing;
    } catch (err) {
      failure = err;
    }
    // The client's body failed, or time ran out: no answer is awaited for that.
    if (!isIoError(failure) || conn.timedOut) throw failure;
    // The socket failed: the member may have answered, then closed.
    if (await a !== ANSWERED) throw failure;
  }
  if (first !== NO_ANSWER) {
    const head = await answer;
    if (head.status !== 101) {
      // Whatever is still being written is abandoned; the connection will not be reused.
      conn.stopUpload = true;
      writing.catch(ignore);
      return head;
    }
  }
  // No answer (or a 101): the write's own outcome decides; a closed member fails it.
  await writing;
  return null;
}

/** The member's early answer: the upload stopped, so neither connection can be kept. */
async function cutShort(
  pool: ConnPool,
  conn: Http1Conn,
  head: ResponseHead,
  req: OutboundRequest,
  opts: SendOptions,
): Promise<UpstreamResponse> {
  head.keepAlive = false;
  const res = await respond(pool, conn, head, req, opts);
  if (res instanceof StreamedResponse) {
    res.bodyCut = true;
    return res;
  }
  return { ...res, bodyCut: true };
}

function ignore(_err: unknown): void {}

/** Reads until a final (or 101) response head; interim 1xx heads go to `onInterim`. */
async function readHead(
  conn: Http1Conn,
  upgrade: boolean,
  onInterim: SendOptions["onInterim"],
): Promise<ResponseHead> {
  let scan = conn.start;
  let interim = 0;
  for (;;) {
    const found = findHeadEnd(conn.buf, scan, conn.end);
    if (found >= 0) {
      const head = parseResponseHead(conn.buf, conn.start, found);
      conn.start = found;
      const status = head.status;
      if (status === 101) {
        if (!upgrade) throw malformed("101 Switching Protocols to a request without Upgrade");
        return head;
      }
      if (status >= 200) return head;
      if (++interim > MAX_INTERIM) throw malformed("too many interim responses");
      if (status !== 100 && onInterim !== undefined) onInterim(status, head.headers);
      scan = found;
      continue;
    }
    scan = ~found;
    if (conn.end - conn.start > MAX_HEAD) throw malformed("response head over 64 KiB");
    scan -= conn.reserve(MIN_READ);
    const k = await conn.read();
    if (k === null) {
      // Deno reports a reset as EOF on read; a reset socket fails an empty write, a closed
      // one does not.
      const reset = await conn.peerReset();
      const what = reset ? "reset" : "closed";
      throw new UpstreamError(
        "head",
        what,
        conn.received === 0
          ? `member ${what} the connection without a response`
          : `member ${what} the connection inside the response head`,
        true,
      );
    }
    conn.end += k;
    conn.received += k;
  }
}

/** Builds the response: no body, a whole small body, or a stream. */
function respond(
  pool: ConnPool,
  conn: Http1Conn,
  head: ResponseHead,
  req: OutboundRequest,
  opts: SendOptions,
): UpstreamResponse | Promise<UpstreamResponse> {
  const status = head.status;
  if (status === 101) {
    watchdog.disarm(conn);
    pool.detach(conn);
    const leftover = conn.buf.slice(conn.start, conn.end);
    opts.onFinish?.bodyFinished(true, 0);
    return {
      status,
      statusText: head.statusText,
      headers: head.headers,
      body: null,
      upgrade: { conn: conn.socket, leftover },
    };
  }
  if (req.method === "HEAD" || status === 204 || status === 304) {
    return done(pool, conn, head, null, opts);
  }
  if (head.chunked) {
    const whole = wholeChunked(conn);
    if (whole !== null) return done(pool, conn, head, whole, opts);
    return streamed(pool, conn, head, BODY_CHUNKED, -1, opts);
  }
  const length = head.contentLength;
  if (length >= 0) {
    if (length > SMALL_BODY) return streamed(pool, conn, head, BODY_LENGTH, length, opts);
    if (conn.end - conn.start >= length) {
      const body = length === 0 ? EMPTY : conn.buf.subarray(conn.start, conn.start + length);
      conn.start += length;
      return done(pool, conn, head, body, opts);
    }
    return readSmallBody(pool, conn, head, length, opts);
  }
  return streamed(pool, conn, head, BODY_CLOSE, -1, opts);
}

/** Hands the connection back and reports the finished body. */
function done(
  pool: ConnPool,
  conn: Http1Conn,
  head: ResponseHead,
  body: Bytes | null,
  opts: SendOptions,
): UpstreamResponse {
  watchdog.disarm(conn);
  const surplus = conn.start !== conn.end;
  pool.release(conn, head.keepAlive && !surplus);
  opts.onFinish?.bodyFinished(true, body === null ? 0 : body.length, false, surplus);
  return {
    status: head.status,
    statusText: head.statusText,
    headers: head.headers,
    date: head.date,
    body,
  };
}

function streamed(
  pool: ConnPool,
  conn: Http1Conn,
  head: ResponseHead,
  mode: number,
  length: number,
  opts: SendOptions,
): UpstreamResponse {
  watchdog.disarm(conn);
  const source = new BodySource(conn, pool, mode, length, head.keepAlive, opts.onFinish);
  return new StreamedResponse(head, source);
}

/** A response whose body streams: pulled directly (`reader`) or as a stream made on demand. */
class StreamedResponse implements UpstreamResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: [string, string][];
  readonly date: string | null;
  readonly reader: BodySource;
  bodyCut = false;
  #stream: ReadableStream<Bytes> | null = null;

  constructor(head: ResponseHead, source: BodySource) {
    this.status = head.status;
    this.statusText = head.statusText;
    this.headers = head.headers;
    this.date = head.date;
    this.reader = source;
  }

  get body(): ReadableStream<Bytes> {
    return this.#stream ??= this.reader.stream();
  }
}

/** Reads the rest of a small Content-Length body, still under the response timeout. */
async function readSmallBody(
  pool: ConnPool,
  conn: Http1Conn,
  head: ResponseHead,
  length: number,
  opts: SendOptions,
): Promise<UpstreamResponse> {
  try {
    while (conn.end - conn.start < length) {
      conn.reserve(Math.max(MIN_READ, length - (conn.end - conn.start)));
      const k = await conn.read();
      if (k === null) throw malformed("response body ended before its Content-Length", "body");
      conn.end += k;
      conn.received += k;
    }
  } catch (err) {
    watchdog.disarm(conn);
    pool.release(conn, false);
    throw toUpstreamError(err, PHASE_BODY, conn);
  }
  const body = conn.buf.subarray(conn.start, conn.start + length);
  conn.start += length;
  return done(pool, conn, head, body, opts);
}

/**
 * Decodes a chunked body that is already complete in the read buffer; null when it is not
 * (the buffer is then left as it was for the streaming decoder).
 */
function wholeChunked(conn: Http1Conn): Bytes | null {
  const d = new ChunkedDecoder(RESPONSE_CHUNKED);
  const buf = conn.buf;
  const end = conn.end;
  let pos = conn.start;
  const spans = chunkSpans;
  spans.length = 0;
  let total = 0;
  while (pos < end && !d.done) {
    pos = d.decode(buf, pos, end);
    if (d.spanEnd > d.spanStart) {
      spans.push(d.spanStart, d.spanEnd);
      total += d.spanEnd - d.spanStart;
    }
  }
  if (!d.done) return null;
  conn.start = pos;
  if (spans.length === 0) return EMPTY;
  if (spans.length === 2) return buf.subarray(spans[0], spans[1]);
  const body = new Uint8Array(total);
  let at = 0;
  for (let i = 0; i < spans.length; i += 2) {
    body.set(buf.subarray(spans[i], spans[i + 1]), at);
    at += spans[i + 1] - spans[i];
  }
  return body;
}
