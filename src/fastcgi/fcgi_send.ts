/**
 * One FastCGI Responder request: BEGIN_REQUEST, PARAMS and STDIN out; STDOUT (CGI head, then
 * body), STDERR and END_REQUEST in. Over `FcgiConns` (what `type: php` uses) on a connection of
 * its own, bounded and queued; over a plain `ConnPool` on a kept-alive one (`FCGI_KEEP_CONN`).
 */

import { pumpBody, withHeadRoom } from "../wire/mod.ts";
import {
  asPull,
  type BodyPull,
  type Bytes,
  clientError,
  type ConnPool,
  type Http1Conn,
  ioError,
  malformed,
  type SendOptions,
  UpstreamError,
  type UpstreamResponse,
  type UpstreamTiming,
  watchdog,
  writeAll,
  writeRest,
} from "../http1/mod.ts";
import { PARAMS_HEAD_ROOM, type ParamsBuffer } from "./params.ts";
import {
  HEADER_LEN,
  MAX_CONTENT,
  PARAMS,
  STDIN,
  STDOUT,
  writeBeginRequest,
  writeHeader,
} from "./record.ts";
import { RecordsIn, type StderrSink } from "./records_in.ts";
import { type CgiHead, findCgiHeadEnd, MAX_CGI_HEAD, parseCgiHead } from "./parse_cgi_head.ts";
import { FcgiBodySource } from "./read_stdout.ts";
import { type ClientTie, FcgiClientGone, FcgiConns, FcgiQueueTimeout } from "./conns.ts";

/**
 * Bodies up to this size are read whole before the answer starts (one write, with its
 * Content-Length); larger ones stream, a chunk per STDOUT record. 256 KiB as most pages of
 * WordPress and DokuWiki fit (streaming them cost a write and a chunk header per 8 KiB record).
 */
export const SMALL_BODY = 262144;
/** STDIN bodies up to this size are copied behind the params and written at once. */
const COALESCE_LIMIT = 16384;

const PHASE_WRITE = 0;
const PHASE_HEAD = 1;
const EMPTY = new Uint8Array(0);

/** A request for a FastCGI Responder. */
export interface FcgiRequest {
  readonly method: string;
  /** The encoded name-value pairs (CONTENT_LENGTH must match the body). */
  readonly params: ParamsBuffer;
  /** `null` for none; bytes can be resent; a pulled body (or a stream) is sent once as STDIN records. */
  readonly body: null | Uint8Array | BodyPull | ReadableStream<Uint8Array>;
  /** Exact length of a stream body (FastCGI needs CONTENT_LENGTH up front). */
  readonly bodyLength: number;
}

/** `send` options plus where STDERR goes and the tie to the client. */
export interface FcgiSendOptions extends SendOptions {
  readonly stderr?: StderrSink;
  /**
   * The client's tie (`FcgiConns` only): when the client leaves, a queued request is dropped
   * (`FcgiClientGone`) and a running one has its connection closed.
   */
  readonly tie?: ClientTie;
}

/**
 * Sends `req` and resolves at the CGI head, with the whole body when it ends within
 * `SMALL_BODY` bytes (checked complete before anything is answered), else with a stream.
 * On `FcgiConns` a request first takes one of its bounded connections, waiting in its queue
 * (within `responseTimeout`, which then covers the wait too); elsewhere (a plain `ConnPool`,
 * kept alive with `FCGI_KEEP_CONN`) it takes an idle connection or opens one. A request that
 * the application closed before answering anything (EOF or reset, no record received) on a
 * reused connection is sent once more on a new one, whatever the method, if its body can be
 * sent again. Rejects with `FcgiQueueFull` when the queue is full, else with `UpstreamError`
 * only: the wait or the answer timed out, malformed records or head, a close mid-answer, a
 * head over 64 KiB.
 */
export async function fcgiSend(
  pool: ConnPool,
  req: FcgiRequest,
  opts: FcgiSendOptions,
): Promise<UpstreamResponse> {
  let timeout = opts.responseTimeout;
  const timing = opts.timing;
  const start = performance.now();
  const gate = pool instanceof FcgiConns ? pool : null;
  const tie = gate === null ? undefined : opts.tie;
  if (tie?.gone) throw new FcgiClientGone(true);
  let handed: Http1Conn | null = null;
  if (gate !== null && !gate.tryEnter()) {
    const admitted = await gate.wait(timeout, tie);
    if (admitted === false) {
      if (tie?.gone) throw new FcgiClientGone(true);
      throw new FcgiQueueTimeout(timeout);
    }
    if (admitted !== true) handed = admitted;
    tie?.arm(null);
    timeout = Math.max(1, timeout - (performance.now() - start));
  }
  // Kept past the answer only to be handed to a waiting request (`FcgiConns.handOff`).
  const keepConn = pool.maxIdle > 0 || (gate !== null && gate.handoffs > 1);
  let conn = handed ?? pool.acquire();
  let resent = false;
  let connect = 0;
  for (;;) {
    if (conn === null) {
      const c0 = performance.now();
      try {
        conn = await pool.open(opts.connectTimeout);
      } catch (err) {
        gate?.leave();
        throw err;
      }
      connect += performance.now() - c0;
    }
    if (tie !== undefined) {
      if (tie.gone) {
        gate!.abandoned(conn, false);
        throw new FcgiClientGone(false);
      }
      const c = conn;
      tie.arm(() => c.close());
    }
    const reused = conn.idleFor >= 0;
    conn.sent = 0;
    conn.received = 0;
    conn.stopUpload = false;
    let phase = PHASE_WRITE;
    let streamed = false;
    try {
      const body = req.body;
      const inline = body === null || (body instanceof Uint8Array && body.length <= COALESCE_LIMIT);
      const bytes = buildRequest(
        conn,
        req.params,
        keepConn,
        inline,
        inline ? body as Uint8Array | null : null,
      );
      const n = bytes.length;
      const k = await conn.socket.write(bytes);
      conn.sent += k;
      if (k < n) await writeRest(conn, bytes, k);
      watchdog.arm(conn, timeout);
      if (!inline) {
        if (body instanceof Uint8Array) await writeStdinBytes(conn, body);
        else {
          streamed = true;
          await writeStdinStream(conn, asPull(body!), req.bodyLength);
        }
      }
      phase = PHASE_HEAD;
      return await readAnswer(pool, conn, req, opts, timing, connect, start);
    } catch (err) {
      watchdog.disarm(conn);
      if (tie?.gone) {
        // Closed because the client left: no resend, no verdict on the application.
        gate!.abandoned(conn, true);
        throw new FcgiClientGone(false);
      }
      const e = err instanceof UpstreamError
        ? err
        : phase === PHASE_WRITE
        ? ioError("write", err, false, conn.timedOut, "writing the request")
        : ioError("head", err, true, conn.timedOut, "waiting for the response head");
      if (
        e instanceof UpstreamError && !resent && reused && !streamed && conn.received === 0 &&
        !e.timeout && (e.kind === "closed" || e.kind === "reset")
      ) {
        // Closed before it read any of it (a recycled worker): any method may go again.
        resent = true;
        if (gate !== null) gate.drop(conn);
        else pool.release(conn, false);
        if (opts.stats !== undefined) opts.stats.staleResends++;
        conn = null;
        continue;
      }
      pool.release(conn, false);
      throw e;
    }
  }
}

/**
 * BEGIN_REQUEST, PARAMS records and their empty end, and with `body` (null or small bytes) the
 * STDIN records and their empty end: written around the pairs in the params' own buffer (its
 * head room), or when the pairs take more than one record, copied into `conn.out`.
 */
function buildRequest(
  conn: Http1Conn,
  params: ParamsBuffer,
  keepConn: boolean,
  withStdin: boolean,
  body: Uint8Array | null,
): Uint8Array {
  const plen = params.length;
  const blen = !withStdin ? -1 : body === null ? 0 : body.length;
  const tail = 8 + (blen < 0 ? 0 : blen > 0 ? blen + 16 : 8);
  let buf: Uint8Array;
  let at: number;
  if (plen <= MAX_CONTENT) {
    params.ensure(tail);
    buf = params.buf;
    writeBeginRequest(buf, 0, keepConn);
    writeHeader(buf, 16, PARAMS, plen);
    at = PARAMS_HEAD_ROOM + plen;
  } else {
    const precords = Math.ceil(plen / MAX_CONTENT);
    const out = conn.out;
    out.ensure(16 + plen + precords * HEADER_LEN + tail);
    buf = out.buf;
    at = writeBeginRequest(buf, 0, keepConn);
    const pairs = params.bytes();
    for (let off = 0; off < plen; off += MAX_CONTENT) {
      const len = Math.min(MAX_CONTENT, plen - off);
      at = writeHeader(buf, at, PARAMS, len);
      buf.set(pairs.subarray(off, off + len), at);
      at += len;
    }
  }
  at = writeHeader(buf, at, PARAMS, 0);
  if (blen >= 0) {
    if (blen > 0) {
      at = writeHeader(buf, at, STDIN, blen);
      buf.set(body!, at);
      at += blen;
    }
    at = writeHeader(buf, at, STDIN, 0);
  }
  return buf.subarray(0, at);
}

/** Large byte bodies: a record header, then the bytes, per 64 KiB - 1; then the empty STDIN. */
async function writeStdinBytes(conn: Http1Conn, body: Uint8Array): Promise<void> {
  for (let off = 0; off < body.length; off += MAX_CONTENT) {
    const len = Math.min(MAX_CONTENT, body.length - off);
    const head = new Uint8Array(HEADER_LEN);
    writeHeader(head, 0, STDIN, len);
    await writeAll(conn, head);
    await writeAll(conn, body.subarray(off, off + len));
  }
  const last = new Uint8Array(HEADER_LEN);
  writeHeader(last, 0, STDIN, 0);
  await writeAll(conn, last);
}

/** Sends the client's pulled body as STDIN records of exactly `length` bytes in all. */
async function writeStdinStream(
  conn: Http1Conn,
  body: BodyPull,
  length: number,
): Promise<void> {
  await pumpBody(conn, body, { length, write: (c) => writeStdin(conn, c), clientError });
  writeHeader(conn.out.buf, 0, STDIN, 0);
  await writeAll(conn, conn.out.buf.subarray(0, HEADER_LEN));
}

/** One pulled chunk as STDIN records, each small one copied behind its header. */
async function writeStdin(conn: Http1Conn, chunk: Uint8Array): Promise<void> {
  for (let off = 0; off < chunk.length; off += MAX_CONTENT) {
    const len = Math.min(MAX_CONTENT, chunk.length - off);
    const out = conn.out;
    if (len <= COALESCE_LIMIT) {
      out.ensure(len + HEADER_LEN);
      writeHeader(out.buf, 0, STDIN, len);
      out.buf.set(chunk.subarray(off, off + len), HEADER_LEN);
      await writeAll(conn, out.buf.subarray(0, len + HEADER_LEN));
    } else {
      writeHeader(out.buf, 0, STDIN, len);
      await writeAll(conn, out.buf.subarray(0, HEADER_LEN));
      await writeAll(conn, chunk.subarray(off, off + len));
    }
  }
}

/**
 * Body bytes seen so far: spans of the read buffer (valid until a read moves it), copied into
 * `copy` only before a read would move the buffer. A page that fits the read buffer (64 KiB
 * once grown) is copied once, at the end, into an array of its exact size (with room for the
 * answer's head before it, so that the front copies it no more): allocating a 32 KiB
 * copy first and doubling it (as each read settled its spans) was 7% of scalwsd's CPU in a
 * DokuWiki profile (58 KB pages), the largest item of JavaScript's own.
 */
class BodyParts {
  spans: number[] = [];
  copy: Uint8Array | null = null;
  copied = 0;
  total = 0;

  add(from: number, to: number): void {
    if (to > from) {
      this.spans.push(from, to);
      this.total += to - from;
    }
  }

  /** Copies the spans out of `buf` (before a read moves or replaces it). */
  settle(buf: Uint8Array): void {
    const s = this.spans;
    if (s.length === 0) return;
    if (this.copy === null || this.copy.length < this.total) {
      // Room for as much again: the body goes on past the read buffer.
      const next = new Uint8Array(Math.max(this.total * 2, (this.copy?.length ?? 0) * 2));
      if (this.copy !== null) next.set(this.copy.subarray(0, this.copied));
      this.copy = next;
    }
    for (let i = 0; i < s.length; i += 2) {
      this.copy.set(buf.subarray(s[i], s[i + 1]), this.copied);
      this.copied += s[i + 1] - s[i];
    }
    s.length = 0;
  }

  /** The whole body: a view of `buf` when it is one span never copied, else a copy. */
  bytes(buf: Bytes): Bytes {
    const s = this.spans;
    if (this.copy === null) {
      if (s.length === 0) return EMPTY;
      if (s.length === 2) return buf.subarray(s[0], s[1]);
      // With room for the answer's head before it: the front writes both at once, uncopied.
      const out = withHeadRoom(this.total);
      let at = 0;
      for (let i = 0; i < s.length; i += 2) {
        out.set(buf.subarray(s[i], s[i + 1]), at);
        at += s[i + 1] - s[i];
      }
      s.length = 0;
      return out;
    }
    this.settle(buf);
    return (this.copy as Bytes).subarray(0, this.copied);
  }
}

/** Reads the CGI head, then the body while it stays small, then decides how to answer. */
async function readAnswer(
  pool: ConnPool,
  conn: Http1Conn,
  req: FcgiRequest,
  opts: FcgiSendOptions,
  timing: UpstreamTiming | undefined,
  connect: number,
  start: number,
): Promise<UpstreamResponse> {
  const rec = new RecordsIn(conn, opts.stderr);
  const head = await readHead(rec);
  if (timing !== undefined) {
    timing.upstreamConnect = connect / 1000;
    timing.upstreamHeader = (performance.now() - start) / 1000;
  }
  const parts = new BodyParts();
  if (head.bodyFrom < head.bodyTo) parts.add(head.bodyFrom, head.bodyTo);
  const cgi = head.cgi;
  const bodyless = req.method === "HEAD" || cgi.status === 204 || cgi.status === 304;
  for (;;) {
    if (rec.ended) {
      rec.skip();
      watchdog.disarm(conn);
      let body = bodyless ? null : parts.bytes(conn.buf);
      if (pool instanceof FcgiConns) {
        // A view of the read buffer (one record: a few KiB at most) is copied out, so that the
        // buffer serves the next connection rather than a new one being allocated; with room
        // for the head before it, as a body of several records.
        if (body !== null && body.buffer === conn.buf.buffer) {
          const copy = withHeadRoom(body.length);
          copy.set(body);
          body = copy;
        }
        pool.finished(conn);
      } else pool.release(conn, conn.start === conn.end);
      opts.onFinish?.bodyFinished(true, body === null ? 0 : body.length);
      return { status: cgi.status, statusText: cgi.statusText, headers: cgi.headers, body };
    }
    if (!rec.buffered()) {
      if (parts.total > SMALL_BODY) break;
      if (rec.willMove()) parts.settle(conn.buf);
      await rec.more();
      continue;
    }
    if (rec.h.type === STDOUT) {
      const cs = rec.contentStart;
      if (!bodyless) parts.add(cs, cs + rec.h.contentLength);
      rec.skip();
    }
  }
  // A large body: what came so far, then the rest as it arrives.
  watchdog.disarm(conn);
  if (pool instanceof FcgiConns) pool.streams(conn);
  parts.settle(conn.buf);
  rec.phase = "body";
  const first = parts.copy === null ? EMPTY : parts.copy.subarray(0, parts.copied);
  const source = new FcgiBodySource(rec, pool, first as Bytes, opts.onFinish);
  return {
    status: cgi.status,
    statusText: cgi.statusText,
    headers: cgi.headers,
    body: new ReadableStream(source, { highWaterMark: 0 }),
  };
}

interface HeadRead {
  readonly cgi: CgiHead;
  /** Body bytes after the head in the current (already consumed) record: buffer offsets. */
  readonly bodyFrom: number;
  readonly bodyTo: number;
}

/**
 * Collects STDOUT bytes until the empty line that ends the CGI head (copied: a head may span
 * records), parses it; the rest of that record is the body's start.
 */
async function readHead(rec: RecordsIn): Promise<HeadRead> {
  const conn = rec.conn;
  let acc: Uint8Array = EMPTY;
  let len = 0;
  let scan = 0;
  for (;;) {
    if (!rec.buffered()) {
      await rec.more();
      continue;
    }
    if (rec.ended) {
      throw malformed(
        len === 0
          ? "application ended the request without any output"
          : "application ended the request inside its header block",
      );
    }
    const cs = rec.contentStart;
    const cl = rec.h.contentLength;
    if (len === 0 && cl > 0) {
      // The usual case: the whole head in the first STDOUT record, parsed where it lies.
      const found = findCgiHeadEnd(conn.buf, cs, cs + cl, cs);
      if (found >= 0) {
        if (found - cs > MAX_CGI_HEAD) throw malformed("application header block over 64 KiB");
        const cgi = parseCgiHead(conn.buf, cs, found);
        rec.skip();
        return { cgi, bodyFrom: found, bodyTo: cs + cl };
      }
    }
    if (len + cl > acc.length) {
      const next = new Uint8Array(Math.max(acc.length * 2, len + cl));
      next.set(acc.subarray(0, len));
      acc = next;
    }
    acc.set(conn.buf.subarray(cs, cs + cl), len);
    const before = len;
    len += cl;
    const found = findCgiHeadEnd(acc, scan, len);
    if (found >= 0) {
      if (found > MAX_CGI_HEAD) throw malformed("application header block over 64 KiB");
      const cgi = parseCgiHead(acc, 0, found);
      rec.skip();
      return { cgi, bodyFrom: cs + (found - before), bodyTo: cs + cl };
    }
    scan = ~found;
    if (len > MAX_CGI_HEAD) throw malformed("application header block over 64 KiB");
    rec.skip();
  }
}
