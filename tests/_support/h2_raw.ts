/**
 * A raw HTTP/2 client for abuse tests: frames written by hand over TLS (ALPN `h2`) to
 * 127.0.0.1, every frame the server sends recorded. It encodes headers as HPACK literals
 * without indexing (no Huffman, no table), reads only the first byte of a response header block
 * (`:status` from the static table) and keeps DATA payloads per stream. SETTINGS and PING are
 * acknowledged unless told not to. Loopback only; every wait is bounded.
 */
import { concat } from "./bytes.ts";

/** How long one `send` may wait on a server that does not read before the connection is closed. */
export const WRITE_STALL_MS = 10_000;

export const DATA = 0x0;
export const HEADERS = 0x1;
export const RST_STREAM = 0x3;
export const SETTINGS = 0x4;
export const PING = 0x6;
export const GOAWAY = 0x7;
export const WINDOW_UPDATE = 0x8;
export const CONTINUATION = 0x9;

export const END_STREAM = 0x1;
export const ACK = 0x1;
export const END_HEADERS = 0x4;

/** Error codes (RFC 9113 section 7). */
export const NO_ERROR = 0x0;
export const PROTOCOL_ERROR = 0x1;
export const COMPRESSION_ERROR = 0x9;
export const CANCEL = 0x8;
export const REFUSED_STREAM = 0x7;
export const ENHANCE_YOUR_CALM = 0xb;

/** SETTINGS identifiers. */
export const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
export const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
export const SETTINGS_MAX_HEADER_LIST_SIZE = 0x6;

/** SETTINGS_HEADER_TABLE_SIZE (1) = 0. */
const NO_TABLE = new Uint8Array([0, 1, 0, 0, 0, 0]);
const PREFACE = new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
const enc = new TextEncoder();

/** One frame: 9-byte header and payload. */
export function frame(
  type: number,
  flags: number,
  stream: number,
  payload: Uint8Array = new Uint8Array(0),
): Uint8Array {
  const f = new Uint8Array(9 + payload.length);
  const n = payload.length;
  f[0] = n >>> 16;
  f[1] = (n >>> 8) & 0xff;
  f[2] = n & 0xff;
  f[3] = type;
  f[4] = flags;
  new DataView(f.buffer).setUint32(5, stream & 0x7fffffff);
  f.set(payload, 9);
  return f;
}

/** An HPACK integer with an `prefix`-bit prefix, the first byte's high bits `first`. */
function hpackInt(value: number, prefix: number, first: number): number[] {
  const max = (1 << prefix) - 1;
  if (value < max) return [first | value];
  const out = [first | max];
  value -= max;
  while (value >= 128) {
    out.push((value & 0x7f) | 0x80);
    value = Math.floor(value / 128);
  }
  out.push(value);
  return out;
}

/** A header block of literal fields without indexing (new names, no Huffman). */
export function headerBlock(fields: readonly (readonly [string, string])[]): Uint8Array {
  const out: number[] = [];
  for (const [name, value] of fields) {
    out.push(0x00);
    const n = enc.encode(name);
    out.push(...hpackInt(n.length, 7, 0));
    for (const b of n) out.push(b);
    const v = enc.encode(value);
    out.push(...hpackInt(v.length, 7, 0));
    for (const b of v) out.push(b);
  }
  return new Uint8Array(out);
}

/** The header block of a request; `extra` fields follow the pseudo-headers. */
export function requestBlock(
  authority: string,
  path: string,
  extra: readonly (readonly [string, string])[] = [],
  method = "GET",
): Uint8Array {
  return headerBlock([
    [":method", method],
    [":scheme", "https"],
    [":authority", authority],
    [":path", path],
    ...extra,
  ]);
}

/** A HEADERS frame opening stream `id` with a complete block (END_HEADERS, END_STREAM). */
export function request(id: number, authority: string, path: string): Uint8Array {
  return frame(HEADERS, END_HEADERS | END_STREAM, id, requestBlock(authority, path));
}

function u32(v: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, v >>> 0);
  return b;
}

/** RST_STREAM of stream `id` with `code`. */
export function reset(id: number, code = CANCEL): Uint8Array {
  return frame(RST_STREAM, 0, id, u32(code));
}

/** What the server sent on one stream. */
export interface StreamSeen {
  /** The response's `:status` (see `statusOf`), or 0. */
  status: number;
  body: string;
  /** END_STREAM seen. */
  ended: boolean;
  /** The RST_STREAM code, or -1. */
  resetCode: number;
}

/** A GOAWAY the server sent. */
export interface GoAwaySeen {
  readonly lastStreamId: number;
  readonly code: number;
  readonly debug: string;
}

/** Options of `H2Raw.connect`. */
export interface H2RawOptions {
  readonly port: number;
  /** The CA certificate, PEM text. */
  readonly ca: string;
  /** SNI name and name checked against the certificate. */
  readonly servername: string;
  /** Acknowledge the server's PINGs (default true). */
  readonly answerPings?: boolean;
  /** Send the preface and an empty SETTINGS frame on connect (default true). */
  readonly preface?: boolean;
}

const STATIC_STATUS: Record<number, number> = {
  0x88: 200,
  0x89: 204,
  0x8a: 206,
  0x8b: 304,
  0x8c: 400,
  0x8d: 404,
  0x8e: 500,
};

/** HPACK Huffman codes of the digits (RFC 7541 appendix B): '0'-'2' 5 bits, '3'-'9' 6 bits. */
function huffmanDigits(b: Uint8Array): string {
  let bits = 0;
  let n = 0;
  let out = "";
  let i = 0;
  for (;;) {
    while (n < 6 && i < b.length) {
      bits = (bits << 8) | b[i++];
      n += 8;
    }
    if (n < 5) break;
    const five = (bits >>> (n - 5)) & 0x1f;
    if (five <= 2) {
      out += String(five);
      n -= 5;
    } else if (
      n >= 6 && ((bits >>> (n - 6)) & 0x3f) >= 0x19 && ((bits >>> (n - 6)) & 0x3f) <= 0x1f
    ) {
      out += String(((bits >>> (n - 6)) & 0x3f) - 0x19 + 3);
      n -= 6;
    } else break; // padding (all ones) or not a digit
    bits &= (1 << n) - 1;
  }
  return out;
}

/**
 * `:status` from the first field of a response header block, when it is indexed in the static
 * table or a literal with the static name (the client sets a header table size of 0, so the
 * server references no dynamic entry); 0 otherwise.
 */
function statusOf(p: Uint8Array): number {
  let i = 0;
  while (i < p.length && (p[i] & 0xe0) === 0x20) i++; // dynamic table size updates
  if (i >= p.length) return 0;
  const first = p[i];
  if (first & 0x80) return STATIC_STATUS[first] ?? 0;
  // Literal with incremental indexing (01), without indexing (0000) or never indexed (0001),
  // name index 8 (:status).
  if (first !== 0x48 && first !== 0x08 && first !== 0x18) return 0;
  const len = p[i + 1] & 0x7f;
  const value = p.subarray(i + 2, i + 2 + len);
  const text = p[i + 1] & 0x80 ? huffmanDigits(value) : new TextDecoder().decode(value);
  return /^\d{3}$/.test(text) ? Number(text) : 0;
}

/** One HTTP/2 connection spoken frame by frame. */
export class H2Raw implements AsyncDisposable {
  /** The server's SETTINGS values (first non-ACK frame and later ones). */
  readonly settings = new Map<number, number>();
  readonly streams = new Map<number, StreamSeen>();
  readonly goaways: GoAwaySeen[] = [];
  /** PING payloads received (not ACKs). */
  pings = 0;
  /** Frames received, by type. */
  readonly counts = new Map<number, number>();
  /** Set once reading ended: the server closed the connection (or it failed). */
  closed = false;
  /** Set once a write failed (the server stopped reading); later writes are dropped. */
  writeFailed = false;
  /** Set when one write waited more than `WRITE_STALL_MS` and the connection was closed. */
  writeStalled = false;
  /** Settles when reading ended. */
  readonly done: Promise<void>;
  private buf = new Uint8Array(64 * 1024);
  private len = 0;
  /** Waiters of `until`, woken on every frame batch, write failure and close. */
  private readonly waiters = new Set<() => void>();
  private writing: Promise<void> = Promise.resolve();
  private readonly answerPings: boolean;

  private constructor(private readonly conn: Deno.TlsConn, opts: H2RawOptions) {
    this.answerPings = opts.answerPings ?? true;
    this.done = this.readLoop();
  }

  static async connect(opts: H2RawOptions): Promise<H2Raw> {
    const tcp = await Deno.connect({ hostname: "127.0.0.1", port: opts.port });
    const conn = await Deno.startTls(tcp, {
      hostname: opts.servername,
      caCerts: [opts.ca],
      alpnProtocols: ["h2"],
    });
    const hs = await conn.handshake();
    if (hs.alpnProtocol !== "h2") {
      conn.close();
      throw new Error(`ALPN chose ${hs.alpnProtocol}, not h2`);
    }
    const c = new H2Raw(conn, opts);
    // A header table size of 0: response statuses come as static entries or literals.
    if (opts.preface ?? true) c.send(concat([PREFACE, frame(SETTINGS, 0, 0, NO_TABLE)]));
    return c;
  }

  /**
   * Queues `bytes` for writing, in order; errors once closed are ignored. A server that stops
   * reading but keeps the connection open would hold a write for ever: past `WRITE_STALL_MS`
   * the connection is closed (`writeStalled` set), so the test fails rather than hangs.
   */
  send(bytes: Uint8Array): Promise<void> {
    this.writing = this.writing.then(async () => {
      if (this.writeFailed) return;
      const timer = setTimeout(() => {
        this.writeStalled = true;
        this.close();
      }, WRITE_STALL_MS);
      try {
        let off = 0;
        while (off < bytes.length) off += await this.conn.write(bytes.subarray(off));
      } catch {
        this.writeFailed = true;
        this.wake();
      } finally {
        clearTimeout(timer);
      }
    });
    return this.writing;
  }

  /** The connection preface alone (for a client built with `preface: false`). */
  static get preface(): Uint8Array {
    return PREFACE;
  }

  /** The stream's record, created on first use. */
  stream(id: number): StreamSeen {
    let s = this.streams.get(id);
    if (s === undefined) {
      s = { status: 0, body: "", ended: false, resetCode: -1 };
      this.streams.set(id, s);
    }
    return s;
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Waits until `cond()` holds or the connection closes, at most `ms`; returns `cond()`. */
  async until(cond: () => boolean, ms: number): Promise<boolean> {
    const end = Date.now() + ms;
    while (!cond() && !this.closed && Date.now() < end) {
      await new Promise<void>((r) => {
        const wake = () => {
          clearTimeout(t);
          this.waiters.delete(wake);
          r();
        };
        const t = setTimeout(wake, Math.min(50, Math.max(1, end - Date.now())));
        this.waiters.add(wake);
      });
    }
    return cond();
  }

  /** Waits (at most `ms`) for the server to close the connection; true when it did. */
  closedWithin(ms: number): Promise<boolean> {
    return this.until(() => this.closed, ms);
  }

  close(): void {
    this.writeFailed = true;
    try {
      this.conn.close();
    } catch {
      // already closed
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.close();
    await this.done;
  }

  private async readLoop(): Promise<void> {
    const chunk = new Uint8Array(16 * 1024);
    try {
      for (;;) {
        const n = await this.conn.read(chunk);
        if (n === null) break;
        if (this.len + n > this.buf.length) {
          const bigger = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
          bigger.set(this.buf.subarray(0, this.len));
          this.buf = bigger;
        }
        this.buf.set(chunk.subarray(0, n), this.len);
        this.len += n;
        this.parse();
        this.wake();
      }
    } catch {
      // reset or closed by us
    }
    this.closed = true;
    this.wake();
  }

  private parse(): void {
    let off = 0;
    const b = this.buf;
    const dv = new DataView(b.buffer);
    while (this.len - off >= 9) {
      const n = (b[off] << 16) | (b[off + 1] << 8) | b[off + 2];
      if (this.len - off < 9 + n) break;
      const type = b[off + 3];
      const flags = b[off + 4];
      const id = dv.getUint32(off + 5) & 0x7fffffff;
      const p = b.subarray(off + 9, off + 9 + n);
      this.onFrame(type, flags, id, p);
      off += 9 + n;
    }
    b.copyWithin(0, off, this.len);
    this.len -= off;
  }

  private onFrame(type: number, flags: number, id: number, p: Uint8Array): void {
    this.counts.set(type, (this.counts.get(type) ?? 0) + 1);
    const dv = new DataView(p.buffer, p.byteOffset, p.byteLength);
    switch (type) {
      case SETTINGS:
        if ((flags & ACK) === 0) {
          for (let i = 0; i + 6 <= p.length; i += 6) {
            this.settings.set(dv.getUint16(i), dv.getUint32(i + 2));
          }
          this.send(frame(SETTINGS, ACK, 0));
        }
        break;
      case PING:
        if ((flags & ACK) === 0) {
          this.pings++;
          if (this.answerPings) this.send(frame(PING, ACK, 0, p.slice()));
        }
        break;
      case GOAWAY:
        this.goaways.push({
          lastStreamId: dv.getUint32(0) & 0x7fffffff,
          code: dv.getUint32(4),
          debug: new TextDecoder().decode(p.subarray(8)),
        });
        break;
      case RST_STREAM:
        this.stream(id).resetCode = dv.getUint32(0);
        break;
      case HEADERS: {
        const s = this.stream(id);
        // A response head's first field is :status; padding and priority are never sent.
        if (s.status === 0) s.status = statusOf(p);
        if (flags & END_STREAM) s.ended = true;
        break;
      }
      case DATA: {
        const s = this.stream(id);
        s.body += new TextDecoder().decode(p);
        if (flags & END_STREAM) s.ended = true;
        // Keep the windows open: give back what was received.
        if (p.length > 0) {
          this.send(
            concat([
              frame(WINDOW_UPDATE, 0, 0, u32(p.length)),
              frame(WINDOW_UPDATE, 0, id, u32(p.length)),
            ]),
          );
        }
        break;
      }
    }
  }
}
