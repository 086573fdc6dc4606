/**
 * WebSocket frames (RFC 6455 section 5) on the member side of a tunnel, where scalwsd is the
 * client: frames it sends are masked, frames it receives must not be.
 */

export const OP_CONTINUATION = 0x0;
export const OP_TEXT = 0x1;
export const OP_BINARY = 0x2;
export const OP_CLOSE = 0x8;
export const OP_PING = 0x9;
export const OP_PONG = 0xa;

/** One received frame, unmasked. */
export interface Frame {
  readonly fin: boolean;
  readonly opcode: number;
  readonly payload: Uint8Array;
}

/** A protocol violation by the peer; `code` is the close code to answer with. */
export class FrameError extends Error {
  override readonly name = "FrameError";
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

/**
 * Encodes one final frame, masked with `mask` (4 bytes) as a client must, or unmasked (`mask`
 * null) as a server sends.
 */
export function encodeFrame(
  opcode: number,
  payload: Uint8Array,
  mask: Uint8Array | null,
): Uint8Array {
  const n = payload.length;
  const head = n < 126 ? 2 : n < 65536 ? 4 : 10;
  const m = mask === null ? 0 : 0x80;
  const out = new Uint8Array(head + (mask === null ? 0 : 4) + n);
  out[0] = 0x80 | opcode;
  if (n < 126) out[1] = m | n;
  else if (n < 65536) {
    out[1] = m | 126;
    out[2] = n >>> 8;
    out[3] = n & 0xff;
  } else {
    out[1] = m | 127;
    new DataView(out.buffer).setBigUint64(2, BigInt(n));
  }
  if (mask === null) {
    out.set(payload, head);
    return out;
  }
  out.set(mask, head);
  const at = head + 4;
  for (let i = 0; i < n; i++) out[at + i] = payload[i] ^ mask[i & 3];
  return out;
}

/** A close frame's payload: the code (absent when `code` is undefined) and a UTF-8 reason. */
export function closePayload(code: number | undefined, reason = ""): Uint8Array {
  if (code === undefined) return new Uint8Array(0);
  const text = new TextEncoder().encode(reason).subarray(0, 123);
  const out = new Uint8Array(2 + text.length);
  out[0] = code >>> 8;
  out[1] = code & 0xff;
  out.set(text, 2);
  return out;
}

/** The code and reason of a received close frame; code undefined when it carries none. */
export function parseClose(payload: Uint8Array): { code: number | undefined; reason: string } {
  if (payload.length === 0) return { code: undefined, reason: "" };
  if (payload.length === 1) throw new FrameError(1002, "close frame with a 1-byte payload");
  const code = (payload[0] << 8) | payload[1];
  const valid = (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) ||
    (code >= 3000 && code <= 4999);
  if (!valid) throw new FrameError(1002, `invalid close code ${code}`);
  let reason: string;
  try {
    reason = new TextDecoder("utf-8", { fatal: true }).decode(payload.subarray(2));
  } catch {
    throw new FrameError(1007, "close reason is not UTF-8");
  }
  return { code, reason };
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A text message's payload as a string; a `FrameError` (1007) when it is not UTF-8. */
export function decodeText(payload: Uint8Array): string {
  try {
    return utf8.decode(payload);
  } catch {
    throw new FrameError(1007, "text message is not UTF-8");
  }
}

/**
 * Splits received bytes into frames. `push` the bytes read, then call `next` until it returns
 * null; a frame's payload is a view that stays valid only until the next `push`. Frames over
 * `maxPayload` bytes are refused (1009).
 */
export class FrameReader {
  private buf: Uint8Array = new Uint8Array(4096);
  private start = 0;
  private end = 0;

  constructor(
    private readonly maxPayload: number,
    /** Reading a client's frames: each must be masked, and is unmasked here. */
    private readonly masked = false,
  ) {}

  push(bytes: Uint8Array): void {
    const held = this.end - this.start;
    if (this.buf.length - this.end < bytes.length) {
      if (this.buf.length - held >= bytes.length && held < this.buf.length / 2) {
        this.buf.copyWithin(0, this.start, this.end);
      } else {
        let size = this.buf.length * 2;
        while (size - held < bytes.length) size *= 2;
        const next = new Uint8Array(size);
        next.set(this.buf.subarray(this.start, this.end));
        this.buf = next;
      }
      this.start = 0;
      this.end = held;
    }
    this.buf.set(bytes, this.end);
    this.end += bytes.length;
  }

  /** The next complete frame, or null when more bytes are needed. Throws `FrameError`. */
  next(): Frame | null {
    const b = this.buf.subarray(this.start, this.end);
    if (b.length < 2) return null;
    const fin = (b[0] & 0x80) !== 0;
    if ((b[0] & 0x70) !== 0) throw new FrameError(1002, "reserved bits set");
    const opcode = b[0] & 0x0f;
    if (((b[1] & 0x80) !== 0) !== this.masked) {
      throw new FrameError(
        1002,
        this.masked ? "unmasked frame from the client" : "masked frame from the server",
      );
    }
    let n = b[1] & 0x7f;
    let at = 2;
    if (n === 126) {
      if (b.length < 4) return null;
      n = (b[2] << 8) | b[3];
      at = 4;
    } else if (n === 127) {
      if (b.length < 10) return null;
      const big = new DataView(b.buffer, b.byteOffset + 2, 8).getBigUint64(0);
      if (big > BigInt(this.maxPayload)) throw new FrameError(1009, "frame too large");
      n = Number(big);
      at = 10;
    }
    if (opcode >= 0x8) {
      if (!fin || n > 125) throw new FrameError(1002, "invalid control frame");
      if (opcode > OP_PONG) throw new FrameError(1002, `unknown opcode ${opcode}`);
    } else if (opcode > OP_BINARY) throw new FrameError(1002, `unknown opcode ${opcode}`);
    if (n > this.maxPayload) throw new FrameError(1009, "frame too large");
    const key = at;
    if (this.masked) at += 4;
    if (b.length < at + n) return null;
    this.start += at + n;
    if (this.start === this.end) this.start = this.end = 0;
    const payload = b.subarray(at, at + n);
    if (this.masked) {
      for (let i = 0; i < n; i++) payload[i] ^= b[key + (i & 3)];
    }
    return { fin, opcode, payload };
  }
}

/**
 * Reassembles fragmented data messages (RFC 6455 section 5.4) of at most `max` bytes. The parts
 * of an unfinished message are copied (the frame reader reuses its buffer); an unfragmented
 * message is handed back as it came.
 */
export class MessageAssembler {
  /** The opcode of the message `add` last completed. */
  opcode = 0;
  private partsOp = 0;
  private parts: Uint8Array[] = [];
  private length = 0;

  constructor(private readonly max: number) {}

  /** A data or continuation frame: the whole message once complete, else null. */
  add(f: Frame): Uint8Array | null {
    if (f.opcode === OP_CONTINUATION) {
      if (this.partsOp === 0) throw new FrameError(1002, "continuation without a message");
      this.parts.push(f.payload.slice());
      this.length += f.payload.length;
      if (this.length > this.max) throw new FrameError(1009, "message too large");
      if (!f.fin) return null;
      const whole = new Uint8Array(this.length);
      let at = 0;
      for (const p of this.parts) {
        whole.set(p, at);
        at += p.length;
      }
      this.opcode = this.partsOp;
      this.partsOp = 0;
      this.parts = [];
      this.length = 0;
      return whole;
    }
    if (this.partsOp !== 0) throw new FrameError(1002, "message inside a fragmented one");
    if (f.fin) {
      this.opcode = f.opcode;
      return f.payload;
    }
    this.partsOp = f.opcode;
    this.parts = [f.payload.slice()];
    this.length = f.payload.length;
    return null;
  }
}
