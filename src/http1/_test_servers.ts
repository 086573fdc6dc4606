/** Loopback servers and request builders for the HTTP/1.1 client's end-to-end tests. */

import type { OutboundRequest, SendOptions, UpstreamResponse } from "./types.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A raw TCP server on 127.0.0.1 whose per-connection behaviour the test scripts. */
export class RawServer implements AsyncDisposable {
  readonly listener: Deno.TcpListener;
  readonly port: number;
  /** Connections accepted so far. */
  accepted = 0;
  readonly #conns = new Set<Deno.Conn>();
  readonly #loop: Promise<void>;
  readonly #handlers = new Set<Promise<void>>();

  constructor(handle: (conn: Deno.Conn, index: number) => Promise<void>) {
    this.listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.port = this.listener.addr.port;
    this.#loop = this.#accept(handle);
  }

  async #accept(handle: (conn: Deno.Conn, index: number) => Promise<void>): Promise<void> {
    for (;;) {
      let conn: Deno.Conn;
      try {
        conn = await this.listener.accept();
      } catch {
        return; // listener closed
      }
      this.#conns.add(conn);
      const p = handle(conn, this.accepted++).catch(() => {}).finally(() => {
        this.#handlers.delete(p);
        this.drop(conn);
      });
      this.#handlers.add(p);
    }
  }

  /** Closes one accepted connection (idempotent). */
  drop(conn: Deno.Conn): void {
    if (!this.#conns.delete(conn)) return;
    try {
      conn.close();
    } catch {
      // closed already
    }
  }

  async close(): Promise<void> {
    this.listener.close();
    for (const c of [...this.#conns]) this.drop(c);
    await this.#loop;
    await Promise.all([...this.#handlers]);
  }
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** Reads one request head (and a Content-Length body) from `conn`; null on EOF. */
export async function readRequest(
  conn: Deno.Conn,
): Promise<{ head: string; body: Uint8Array } | null> {
  let buf: Uint8Array = new Uint8Array(0);
  const chunk = new Uint8Array(65536);
  for (;;) {
    const text = latin1(buf);
    const end = text.indexOf("\r\n\r\n");
    if (end >= 0) {
      const head = text.slice(0, end + 4);
      const m = /\r\ncontent-length: *(\d+)/i.exec(head);
      const length = m ? Number(m[1]) : 0;
      while (buf.length < head.length + length) {
        const n = await conn.read(chunk);
        if (n === null) return null;
        buf = join(buf, chunk.subarray(0, n));
      }
      return { head, body: buf.slice(head.length, head.length + length) };
    }
    const n = await conn.read(chunk);
    if (n === null) return null;
    buf = join(buf, chunk.subarray(0, n));
  }
}

function join(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Bytes to latin1 text. */
export function latin1(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i += 8192) {
    s += String.fromCharCode.apply(null, b.subarray(i, i + 8192) as unknown as number[]);
  }
  return s;
}

/** Writes a latin1 string or bytes fully. */
export async function writeText(conn: Deno.Conn, s: string | Uint8Array): Promise<void> {
  const b = typeof s === "string" ? Uint8Array.from(s, (c) => c.charCodeAt(0)) : s;
  let at = 0;
  while (at < b.length) at += await conn.write(b.subarray(at));
}

/** A request as the proxy handler would build it. */
export function outbound(
  method: string,
  target: string,
  init: {
    headers?: HeadersInit;
    body?: OutboundRequest["body"];
    bodyLength?: number;
    peer?: string;
    trusted?: boolean;
    upgrade?: boolean;
  } = {},
): OutboundRequest {
  return {
    method,
    target,
    head: {
      headers: new Headers(init.headers),
      host: "member.test",
      clientHost: "www.example.com",
      peer: init.peer ?? "192.0.2.10",
      peerTrusted: init.trusted ?? false,
      proto: "https",
      upgrade: init.upgrade ?? false,
    },
    body: init.body ?? null,
    bodyLength: init.bodyLength ?? -1,
  };
}

/** Send options with a stale-resend counter. */
export function sendOptions(
  responseTimeout = 5000,
  connectTimeout = 2000,
): SendOptions & { stats: { staleResends: number } } {
  return { connectTimeout, responseTimeout, stats: { staleResends: 0 } };
}

/** The whole response body as bytes. */
export async function bodyBytes(res: UpstreamResponse): Promise<Uint8Array> {
  if (res.body === null) return new Uint8Array(0);
  if (res.body instanceof Uint8Array) return res.body.slice();
  return await new Response(res.body).bytes();
}

/** The whole response body as UTF-8 text. */
export async function bodyText(res: UpstreamResponse): Promise<string> {
  return dec.decode(await bodyBytes(res));
}

/** A stream of `total` pseudo-random bytes in chunks of `size`, and its SHA-256 via `digest`. */
export function patternStream(total: number, size = 65536): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent >= total) {
        c.close();
        return;
      }
      const n = Math.min(size, total - sent);
      c.enqueue(pattern(sent, n));
      sent += n;
    },
  });
}

/** Bytes `offset .. offset+n` of a fixed pattern. */
export function pattern(offset: number, n: number): Uint8Array<ArrayBuffer> {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = ((offset + i) * 2654435761) >>> 24;
  return b;
}

export async function sha256(b: Uint8Array | ReadableStream<Uint8Array>): Promise<string> {
  const bytes = b instanceof Uint8Array ? b.slice() : await new Response(b).bytes();
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(d, (x) => x.toString(16).padStart(2, "0")).join("");
}

export { enc };
