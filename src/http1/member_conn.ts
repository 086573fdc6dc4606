/** One kept-alive connection to a member with its reused read and write buffers. */

import { HeadBuffer } from "./write_request_head.ts";
import type { BodyPull, Bytes, Socket } from "./types.ts";
import type { Expirable } from "./watchdog.ts";

/** Initial read buffer per connection. */
export const READ_BUFFER = 16384;

const EMPTY = new Uint8Array(0);

/** A socket plus what the client keeps per connection. Owned by a `ConnPool`. */
export class Http1Conn implements Expirable {
  readonly socket: Socket;
  /** Read buffer; unconsumed bytes are `buf[start, end)`. Empty while the connection is idle. */
  buf: Bytes;
  start = 0;
  end = 0;
  /** Write buffer for request heads and small bodies. */
  readonly out: HeadBuffer;
  /** Pool clock when it was last put back idle. */
  idleSince = 0;
  /** How long it sat idle before the current exchange; -1 for a fresh connection. */
  idleFor = -1;
  closed = false;
  /** Checked out of its pool (between acquire or open and release or detach). */
  inUse = false;
  /** Set by the watchdog; a read or write failing after this is a timeout. */
  timedOut = false;
  expiresAt = 0;
  /** The request body while `send` waits on it, so that a timeout can cancel it. */
  upload: BodyPull | null = null;
  /** Request bytes written in the current exchange. */
  sent = 0;
  /** Set when the member answered before the whole body was sent: the upload stops. */
  stopUpload = false;
  /**
   * A read started when the connection went idle, so that a member closing it is noticed at
   * once (nginx watches idle upstream connections the same way). The next exchange's first
   * read takes it over.
   */
  private watch: Promise<number | null> | null = null;
  /** Response bytes received in the current exchange. */
  received = 0;

  /** `buf` and `out`: buffers a closed connection left (else new ones). */
  constructor(socket: Socket, buf?: Bytes, out?: Uint8Array) {
    this.socket = socket;
    this.buf = buf ?? new Uint8Array(READ_BUFFER);
    this.out = new HeadBuffer(out ?? 4096);
  }

  /** Response timeout: close the socket so that pending reads and writes fail. */
  expire(): void {
    this.timedOut = true;
    const upload = this.upload;
    if (upload !== null) {
      this.upload = null;
      upload.cancel();
    }
    this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.socket.close();
    } catch {
      // already closed by the runtime
    }
  }

  /**
   * Makes room for at least `min` bytes after `end`, compacting or growing the buffer.
   * Returns how far the unconsumed bytes moved towards the start.
   */
  reserve(min: number): number {
    if (this.buf.length - this.end >= min) return 0;
    const shift = this.start;
    if (shift > 0) {
      this.buf.copyWithin(0, shift, this.end);
      this.end -= shift;
      this.start = 0;
      if (this.buf.length - this.end >= min) return shift;
    }
    let size = this.buf.length * 2;
    while (size - this.end < min) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.end));
    this.buf = next;
    return shift;
  }

  /** After a read saw EOF: true when the peer reset the connection rather than closed it. */
  async peerReset(): Promise<boolean> {
    try {
      await this.socket.write(EMPTY);
      return false;
    } catch {
      return true;
    }
  }

  /** Reads into the free space after `end`; the caller adds the count to `end`. */
  read(): Promise<number | null> {
    const w = this.watch;
    if (w !== null) {
      // Started into `buf` at offset 0 while idle; `end` is still 0 at an exchange's first read.
      this.watch = null;
      return w;
    }
    return this.socket.read(this.end === 0 ? this.buf : this.buf.subarray(this.end));
  }

  /**
   * Starts watching an idle connection (`end` is 0): if the member closes it, or sends bytes
   * nobody asked for, while it is idle, `onLost` is called with it.
   */
  watchIdle(onLost: (conn: Http1Conn) => void): void {
    const p = this.socket.read(this.buf);
    this.watch = p;
    this.settleWatch(p, onLost);
  }

  private async settleWatch(p: Promise<number | null>, onLost: (conn: Http1Conn) => void) {
    try {
      await p;
    } catch {
      // closed by us, or reset by the member: either way not usable while idle
    }
    if (this.watch !== p || this.inUse) return; // an exchange owns the result now
    this.watch = null;
    onLost(this);
  }
}
