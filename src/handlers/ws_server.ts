/**
 * The server side of a WebSocket on a raw client connection (RFC 6455), for tunnels whose
 * client came through scalwsd's own HTTP/1.1 front: it offers the part of the `WebSocket`
 * interface the tunnel's relay uses, so the relay works the same whichever front served the
 * handshake. Client frames must be masked; fragmented messages are assembled (up to
 * `maxMessage`, else 1009); pings are answered; the closing handshake is answered and ends the
 * connection.
 */

import {
  closePayload,
  encodeFrame,
  type Frame,
  FrameError,
  FrameReader,
  MessageAssembler,
  OP_BINARY,
  OP_CLOSE,
  OP_PING,
  OP_PONG,
  OP_TEXT,
  parseClose,
} from "./ws_frame.ts";

type RawConn = Pick<Deno.Conn, "read" | "write" | "close">;

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

/** How long a sent close frame waits for the client's (ms). */
const CLOSE_WAIT = 1000;

const utf8 = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

async function writeAll(conn: RawConn, bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.length) done += await conn.write(bytes.subarray(done));
}

/** What the relay reads of a message event. */
export interface WsMessage {
  readonly data: string | ArrayBuffer;
}

/** What the relay reads of a close event. */
export interface WsClose {
  readonly code: number;
  readonly reason: string;
}

/** The subset of `WebSocket` a tunnel relay uses, on a raw connection. */
export class ServerWebSocket {
  binaryType = "arraybuffer";
  readyState = CONNECTING;
  /** Bytes queued to the client and not yet written. */
  bufferedAmount = 0;
  onopen: (() => void) | null = null;
  onmessage: ((e: WsMessage) => void) | null = null;
  onclose: ((e: WsClose) => void) | null = null;
  onerror: (() => void) | null = null;
  private readonly reader: FrameReader;
  private writes: Promise<void> = Promise.resolve();
  /** A fragmented message being assembled. */
  private readonly message: MessageAssembler;
  private closeSent = false;
  private closeCode = 1005;
  private closeReason = "";
  private ended = false;

  constructor(
    private readonly conn: RawConn,
    private readonly leftover: Uint8Array,
    readonly protocol: string,
    private readonly maxMessage: number,
    /** Called once the connection is closed. */
    private readonly onEnd: () => void,
  ) {
    this.reader = new FrameReader(maxMessage, true);
    this.message = new MessageAssembler(maxMessage);
  }

  /** Opens (the 101 was written) and starts reading; call after setting the handlers. */
  start(): void {
    this.readyState = OPEN;
    this.onopen?.();
    this.read();
  }

  send(data: string | Uint8Array | ArrayBuffer): void {
    if (this.readyState !== OPEN) return;
    if (typeof data === "string") this.frame(OP_TEXT, encoder.encode(data));
    else this.frame(OP_BINARY, data instanceof Uint8Array ? data : new Uint8Array(data));
  }

  /** Starts the closing handshake (1005: no code). */
  close(code?: number, reason = ""): void {
    if (this.readyState >= CLOSING) return;
    this.readyState = CLOSING;
    this.sendClose(code, reason);
    const timer = setTimeout(() => this.end(), CLOSE_WAIT);
    Deno.unrefTimer(timer);
  }

  private sendClose(code: number | undefined, reason: string): void {
    if (this.closeSent) return;
    this.closeSent = true;
    this.frame(OP_CLOSE, closePayload(code, reason));
  }

  private frame(opcode: number, payload: Uint8Array): void {
    const bytes = encodeFrame(opcode, payload, null);
    this.bufferedAmount += bytes.length;
    this.writes = this.writes.then(() => writeAll(this.conn, bytes)).then(
      () => {
        this.bufferedAmount -= bytes.length;
      },
      () => this.end(),
    );
  }

  private async read(): Promise<void> {
    if (this.leftover.length > 0) {
      this.reader.push(this.leftover);
      if (!this.drain()) return;
    }
    const buf = new Uint8Array(16384);
    while (!this.ended) {
      let n: number | null;
      try {
        n = await this.conn.read(buf);
      } catch {
        n = null;
      }
      if (n === null) {
        // Gone without a closing handshake: 1006, as a browser reports it.
        if (!this.ended) {
          this.closeCode = this.closeSent ? this.closeCode : 1006;
          this.end();
        }
        return;
      }
      this.reader.push(buf.subarray(0, n));
      if (!this.drain()) return;
    }
  }

  /** Handles the frames read so far; false when the connection is over. */
  private drain(): boolean {
    try {
      for (let f = this.reader.next(); f !== null; f = this.reader.next()) {
        if (!this.handle(f)) return false;
      }
      return true;
    } catch (err) {
      if (!(err instanceof FrameError)) throw err;
      this.closeCode = 1006;
      this.sendClose(err.code, "");
      this.readyState = CLOSING;
      this.writes.finally(() => this.end());
      return false;
    }
  }

  private handle(f: Frame): boolean {
    switch (f.opcode) {
      case OP_PING:
        this.frame(OP_PONG, f.payload.slice());
        return true;
      case OP_PONG:
        return true;
      case OP_CLOSE: {
        const { code, reason } = parseClose(f.payload);
        this.closeCode = code ?? 1005;
        this.closeReason = reason;
        // Answer with the same code, then close the connection.
        this.sendClose(code, "");
        this.readyState = CLOSING;
        this.writes.finally(() => this.end());
        return false;
      }
      default: {
        const whole = this.message.add(f);
        if (whole !== null) {
          this.deliver(
            this.message.opcode,
            (whole === f.payload ? whole.slice() : whole) as Uint8Array<ArrayBuffer>,
          );
        }
        return true;
      }
    }
  }

  private deliver(opcode: number, payload: Uint8Array<ArrayBuffer>): void {
    if (this.readyState !== OPEN) return;
    if (opcode === OP_TEXT) {
      let text: string;
      try {
        text = utf8.decode(payload);
      } catch {
        throw new FrameError(1007, "text message is not UTF-8");
      }
      this.onmessage?.({ data: text });
    } else this.onmessage?.({ data: payload.buffer });
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.readyState = CLOSED;
    try {
      this.conn.close();
    } catch {
      // already closed
    }
    this.onEnd();
    this.onclose?.({ code: this.closeCode, reason: this.closeReason });
  }
}
