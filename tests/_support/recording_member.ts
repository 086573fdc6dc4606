/**
 * A raw member that records the exact bytes of every connection, and the strictest reading of
 * a request, for smuggling and bad-input tests. Loopback only.
 */
import assert from "node:assert/strict";
import { concat, latin1 } from "./bytes.ts";

const enc = new TextEncoder();

/** The bytes one member connection received, and whether the peer has closed it. */
export interface Recorded {
  bytes: Uint8Array;
  closed: boolean;
}

/**
 * A raw member that records every connection's bytes and answers `200 ok` once a request
 * looks complete (leniently: the strict reading is the test's). It keeps reading until
 * scalwsd closes the connection, so bytes sent after a request are caught too.
 */
export class RecordingMember implements AsyncDisposable {
  readonly conns: Recorded[] = [];
  readonly address: string;
  private readonly listener: Deno.TcpListener;
  private readonly open = new Set<Deno.Conn>();
  private readonly tasks = new Set<Promise<void>>();
  private readonly loop: Promise<void>;

  constructor() {
    this.listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.address = `127.0.0.1:${(this.listener.addr as Deno.NetAddr).port}`;
    this.loop = this.accept();
  }

  private async accept(): Promise<void> {
    try {
      for await (const conn of this.listener) {
        this.open.add(conn);
        const t = this.serve(conn).finally(() => {
          this.open.delete(conn);
          this.tasks.delete(t);
        });
        this.tasks.add(t);
      }
    } catch { /* closed */ }
  }

  private async serve(conn: Deno.Conn): Promise<void> {
    const rec: Recorded = { bytes: new Uint8Array(0), closed: false };
    this.conns.push(rec);
    const buf = new Uint8Array(65536);
    let answered = false;
    try {
      for (;;) {
        const n = await conn.read(buf);
        if (n === null) break;
        rec.bytes = concat([rec.bytes, buf.subarray(0, n)]);
        if (!answered && looksComplete(latin1(rec.bytes))) {
          answered = true;
          await conn.write(enc.encode("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"));
        }
      }
    } catch { /* reset: the recording ends here */ }
    rec.closed = true;
    try {
      conn.close();
    } catch { /* closed */ }
  }

  async close(): Promise<void> {
    this.listener.close();
    await this.loop;
    for (const c of this.open) {
      try {
        c.close();
      } catch { /* closed */ }
    }
    await Promise.all([...this.tasks]);
  }
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** True once `text` holds a whole request, read leniently. */
function looksComplete(text: string): boolean {
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) return false;
  const head = text.slice(0, end).toLowerCase();
  const rest = text.slice(end + 4);
  if (head.includes("\r\ntransfer-encoding: chunked")) return rest.endsWith("0\r\n\r\n");
  const cl = /\r\ncontent-length: (\d+)/.exec(head);
  return cl === null || rest.length >= Number(cl[1]);
}

/** A request as a strict member reads it. */
export interface StrictRequest {
  method: string;
  target: string;
  body: string;
  /** False when the connection ended before the request did (nothing a member acts on). */
  complete: boolean;
}

// deno-lint-ignore no-control-regex -- field values may hold HTAB, SP, VCHAR, obs-text only
const TOKEN_LINE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+: [^\x00-\x08\x0a-\x1f\x7f]*$/;

/**
 * Reads one connection's bytes the strictest way: CRLF only, one request line, token names,
 * at most one of one Content-Length or `Transfer-Encoding: chunked`, a body that is exactly
 * what the framing says and nothing after it. Anything a lenient parser could read otherwise
 * fails the assertion.
 */
export function strictRequest(bytes: Uint8Array): StrictRequest {
  const text = latin1(bytes);
  const end = text.indexOf("\r\n\r\n");
  const headText = end < 0 ? text : text.slice(0, end);
  assert.ok(!/\r(?!\n)|(?<!\r)\n/.test(headText), `bare CR or LF in ${JSON.stringify(headText)}`);
  const lines = headText.split("\r\n");
  const m = /^([A-Z]+) (\/\S*) HTTP\/1\.1$/.exec(lines[0]);
  if (end < 0) {
    return { method: m?.[1] ?? "", target: m?.[2] ?? "", body: "", complete: false };
  }
  assert.ok(m, `request line ${JSON.stringify(lines[0])}`);
  let length = -1;
  let chunked = false;
  let framing = 0;
  for (const line of lines.slice(1)) {
    assert.match(line, TOKEN_LINE);
    const name = line.slice(0, line.indexOf(":")).toLowerCase();
    const value = line.slice(line.indexOf(":") + 2);
    if (name === "content-length") {
      assert.match(value, /^\d+$/);
      length = Number(value);
      framing++;
    } else if (name === "transfer-encoding") {
      assert.equal(value, "chunked");
      chunked = true;
      framing++;
    }
  }
  assert.ok(framing <= 1, `${framing} framing headers in ${JSON.stringify(headText)}`);
  const rest = text.slice(end + 4);
  if (length >= 0) {
    assert.ok(rest.length <= length, `bytes after a ${length}-byte body`);
    return { method: m[1], target: m[2], body: rest, complete: rest.length === length };
  }
  if (!chunked) {
    assert.equal(rest.length, 0, "bytes after a request without a body");
    return { method: m[1], target: m[2], body: "", complete: true };
  }
  // Chunked: each size line lower-case hex and CRLF; an unfinished stream is a prefix.
  let body = "";
  let pos = 0;
  for (;;) {
    const lf = rest.indexOf("\r\n", pos);
    if (lf < 0) {
      assert.match(rest.slice(pos), /^[0-9a-f]*\r?$/);
      return { method: m[1], target: m[2], body, complete: false };
    }
    const sizeLine = rest.slice(pos, lf);
    assert.match(sizeLine, /^[0-9a-f]+$/);
    const size = parseInt(sizeLine, 16);
    pos = lf + 2;
    if (size === 0) {
      const tail = rest.slice(pos);
      assert.ok("\r\n".startsWith(tail), `bytes after the last chunk: ${JSON.stringify(tail)}`);
      return { method: m[1], target: m[2], body, complete: tail === "\r\n" };
    }
    body += rest.slice(pos, pos + size);
    if (rest.length < pos + size + 2) {
      assert.ok("\r\n".startsWith(rest.slice(pos + size)));
      return { method: m[1], target: m[2], body, complete: false };
    }
    assert.equal(rest.slice(pos + size, pos + size + 2), "\r\n");
    pos += size + 2;
  }
}
