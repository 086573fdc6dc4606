/**
 * Writes answers on a client connection: the head once, in one write with a small body, then
 * the body framed for the client (Content-Length, chunked, or up to the close for HTTP/1.0),
 * each chunk written before the next is pulled so that a slow client slows the member down.
 */

import { type Answer, FrontAnswer, type PullBody } from "./answer.ts";
import { log } from "../observe/mod.ts";
import {
  BODY_SIZE,
  giveBodyBuffer,
  giveBuffer,
  POOLED_SIZE,
  takeBodyBuffer,
  takeBuffer,
} from "./buffer_pool.ts";
import { claimHeadRoom, giveHeadRoom, statusText } from "../wire/mod.ts";
import { ChunkedWriter } from "./write_chunked_response.ts";

/** The byte stream of a client connection (a `Deno.Conn` or a test double). */
export type ClientSocket = Pick<Deno.Conn, "read" | "write" | "close">;

const encoder = new TextEncoder();

/** `Date` value, recomputed at most once a second. */
let dateLine = "";
let dateUntil = 0;
function date(): string {
  const now = Date.now();
  if (now >= dateUntil) {
    dateLine = "date: " + new Date(now).toUTCString() + "\r\n";
    dateUntil = now - (now % 1000) + 1000;
  }
  return dateLine;
}

/** Encodes `s` (chars up to U+00FF as single bytes) into `buf` from `at`; -1 if it does not fit. */
function encodeLatin1(s: string, buf: Uint8Array, at: number): number {
  if (s.length > buf.length - at) return -1;
  const r = encoder.encodeInto(s, buf.subarray(at));
  if (r.read === s.length && r.written === s.length) return at + r.written;
  // Header values are byte strings: chars 0x80-0xFF stand for one byte each.
  for (let i = 0; i < s.length; i++) buf[at + i] = s.charCodeAt(i);
  return at + s.length;
}

/** Writes all of `bytes`. */
export async function writeAll(conn: ClientSocket, bytes: Uint8Array): Promise<void> {
  let done = await conn.write(bytes);
  while (done < bytes.length) done += await conn.write(bytes.subarray(done));
}

/** What the writer needs to know of the request being answered. */
export interface AnsweredRequest {
  readonly method: string;
  /** 0 for HTTP/1.0. */
  readonly minor: number;
}

const HOP = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "date"]);

/** Statuses that never carry a body. */
function bodiless(status: number): boolean {
  return status < 200 || status === 204 || status === 304;
}

/**
 * Writes `answer` to `conn`. `keepAlive`: the connection stays open afterwards (the head says
 * so). Resolves to true when all of it was written and the connection can carry another
 * request, false when it must close (a body without a length to an HTTP/1.0 client, a failed
 * write, a body stream that broke).
 */
export async function writeAnswer(
  conn: ClientSocket,
  answer: Answer,
  req: AnsweredRequest,
  keepAlive: boolean,
): Promise<boolean> {
  let status: number;
  let body: Uint8Array | ReadableStream<Uint8Array> | PullBody | null;
  let lines = "";
  let length = -1;
  let closeAsked = false;
  // An answer's own `Date` (a stored answer's, the member's) is kept; else scalwsd's.
  let dated = "";
  if (answer instanceof FrontAnswer) {
    status = answer.status;
    body = answer.body;
    const h = answer.headers;
    for (let i = 0; i < h.length; i++) {
      const name = h[i][0];
      if (HOP.has(name)) {
        if (name === "content-length") length = Number(h[i][1]);
        else if (name === "connection") closeAsked = /close/i.test(h[i][1]);
        else if (name === "date" && dated === "") dated = "date: " + h[i][1] + "\r\n";
        continue;
      }
      lines += name + ": " + h[i][1] + "\r\n";
    }
  } else {
    status = answer.status;
    body = answer.body;
    for (const [name, value] of answer.headers) {
      if (HOP.has(name)) {
        if (name === "content-length") length = Number(value);
        else if (name === "connection") closeAsked = /close/i.test(value);
        else if (name === "date" && dated === "") dated = "date: " + value + "\r\n";
        continue;
      }
      lines += name + ": " + value + "\r\n";
    }
  }
  if (closeAsked) keepAlive = false;
  const head = req.method === "HEAD";
  const noBody = head || bodiless(status);
  let bytes: Uint8Array | null = null;
  let stream: ReadableStream<Uint8Array> | PullBody | null = null;
  let first: Uint8Array | null = null;
  if (body instanceof Uint8Array) bytes = body;
  else if (body !== null) {
    stream = body;
    if (
      body instanceof ReadableStream && !(answer instanceof FrontAnswer) && length < 0 && !noBody
    ) {
      // A Response of scalwsd's own (text, bytes): one chunk then the end is sent with its
      // length. Anything longer goes chunked, the chunk already read first.
      const pre = await preRead(body);
      if (pre.whole !== null) {
        bytes = pre.whole;
        stream = null;
      } else first = pre.first;
    }
  }
  let framing: string;
  let chunked = false;
  if (bodiless(status)) framing = "";
  else if (bytes !== null) framing = "content-length: " + bytes.length + "\r\n";
  else if (stream !== null && length >= 0) framing = "content-length: " + length + "\r\n";
  else if (stream !== null) {
    if (req.minor === 1 && !head) {
      framing = "transfer-encoding: chunked\r\n";
      chunked = true;
    } else {
      framing = "";
      keepAlive = head && keepAlive;
    }
  } else if (length >= 0 && head) framing = "content-length: " + length + "\r\n";
  // A HEAD answer's length is the GET body's: none known, none sent (0 would be false).
  else if (head) framing = "";
  else framing = "content-length: 0\r\n";
  if (noBody && stream !== null) {
    drop(stream);
    stream = null;
  }
  const connection = status === 101
    ? "connection: upgrade\r\n"
    : !keepAlive
    ? "connection: close\r\n"
    : req.minor === 0
    ? "connection: keep-alive\r\n"
    : "";
  const reason = answer instanceof Response && answer.statusText !== ""
    ? answer.statusText
    : statusText(status);
  const text = "HTTP/1.1 " + status + " " + reason + "\r\n" + lines +
    (dated === "" ? date() : dated) +
    framing +
    connection + "\r\n";

  // A byte body goes out behind the head in one write, copied into a pooled buffer (16 or
  // 64 KiB) at once: it may be a view of a member connection's buffer, which is reused as soon
  // as this function awaits.
  const small = !noBody && bytes !== null ? bytes : null;
  // A body made with room before it (a FastCGI page) takes the head there: nothing copied;
  // its buffer serves the next such body once written.
  const roomy = small === null ? null : claimHeadRoom(small, text.length);
  const total = text.length + (small === null ? 0 : small.length);
  const pooled = roomy === null && total <= POOLED_SIZE ? takeBuffer() : null;
  const big = roomy === null && pooled === null && total <= BODY_SIZE ? takeBodyBuffer() : null;
  const out = roomy ?? pooled ?? big ?? new Uint8Array(total + text.length * 2);
  try {
    // Into the room alone: a head that is not Latin-1 must not spill into the body.
    let n = encodeLatin1(text, roomy === null ? out : out.subarray(0, text.length), 0);
    if (n < 0) throw new Error("answer head too large");
    if (roomy !== null) n = roomy.length;
    else if (small !== null) {
      out.set(small, n);
      n += small.length;
    }
    const view = out.subarray(0, n);
    const k = await conn.write(view);
    if (k < n) await writeAll(conn, view.subarray(k));
  } catch {
    if (stream !== null) drop(stream);
    (answer as FrontAnswer).onWritten?.(false);
    return false;
  } finally {
    if (pooled !== null) giveBuffer(pooled);
    else if (big !== null) giveBodyBuffer(big);
    else if (roomy !== null) giveHeadRoom(roomy);
  }
  if (stream === null) {
    if (answer instanceof FrontAnswer) answer.onWritten?.(true);
    return keepAlive;
  }
  const ok = stream instanceof ReadableStream
    ? await writeStream(conn, stream, chunked, length, first)
    : await writePulled(conn, stream, chunked, length);
  if (answer instanceof FrontAnswer) answer.onWritten?.(ok);
  return ok && keepAlive;
}

/** Writes a body stream, each chunk before the next is pulled; false when it broke. */
async function writeStream(
  conn: ClientSocket,
  stream: ReadableStream<Uint8Array>,
  chunked: boolean,
  length: number,
  first: Uint8Array | null,
): Promise<boolean> {
  const reader = stream.getReader();
  const framer = chunked ? new ChunkedWriter(conn) : null;
  let sent = 0;
  for (;;) {
    let r: ReadableStreamReadResult<Uint8Array>;
    try {
      if (first !== null) {
        r = { done: false, value: first };
        first = null;
      } else r = await reader.read();
    } catch (err) {
      // The member's body broke: the client sees the connection close (as with Deno.serve,
      // whose onError logs it the same way).
      log("error", "request_failed", { error: String(err) });
      return false;
    }
    if (r.done) break;
    const chunk = r.value;
    if (chunk.length === 0) continue;
    sent += chunk.length;
    try {
      if (framer !== null) await framer.write(chunk);
      else await writeAll(conn, chunk);
    } catch {
      reader.cancel().catch(() => {});
      return false;
    }
  }
  try {
    if (framer !== null) await framer.end();
  } catch {
    return false;
  }
  return length < 0 || sent === length;
}

/** Drops a body that will not be written. */
function drop(body: ReadableStream<Uint8Array> | PullBody): void {
  if (body instanceof ReadableStream) body.cancel().catch(() => {});
  else body.cancel();
}

/**
 * Writes a pulled body (a member's, straight from its connection), each chunk before the next
 * is read (as views of the member's buffer when the body lends them: nothing copied); false
 * when it broke (the client's connection then closes: never a clean end).
 */
async function writePulled(
  conn: ClientSocket,
  body: PullBody,
  chunked: boolean,
  length: number,
): Promise<boolean> {
  const framer = chunked ? new ChunkedWriter(conn) : null;
  const view = body.readView !== undefined;
  let sent = 0;
  for (;;) {
    let chunk: Uint8Array | null;
    try {
      chunk = await (view ? body.readView!() : body.read());
    } catch (err) {
      log("error", "request_failed", { error: String(err) });
      return false;
    }
    if (chunk === null) break;
    if (chunk.length === 0) continue;
    sent += chunk.length;
    try {
      if (framer !== null) await framer.write(chunk);
      else await writeAll(conn, chunk);
    } catch {
      body.cancel();
      return false;
    }
  }
  try {
    if (framer !== null) await framer.end();
  } catch {
    return false;
  }
  return length < 0 || sent === length;
}

/**
 * The start of a `Response` body of unknown length: `whole` when it is one chunk (or none),
 * else `first` (the stream's reader keeps the rest; a broken stream gives an empty `first`).
 */
async function preRead(
  body: ReadableStream<Uint8Array>,
): Promise<{ whole: Uint8Array | null; first: Uint8Array | null }> {
  const reader = body.getReader();
  try {
    const a = await reader.read();
    if (a.done) return { whole: new Uint8Array(0), first: null };
    const b = await reader.read();
    if (b.done) return { whole: a.value, first: null };
    const both = new Uint8Array(a.value.length + b.value.length);
    both.set(a.value);
    both.set(b.value, a.value.length);
    return { whole: null, first: both };
  } catch {
    // Broken: the head goes out, then writeStream meets (and logs) the same error.
    return { whole: null, first: new Uint8Array(0) };
  } finally {
    reader.releaseLock();
  }
}
