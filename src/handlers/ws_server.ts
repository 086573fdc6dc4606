/**
 * The server side of a WebSocket on a raw client connection (RFC 6455), for tunnels whose
 * client came through scalwsd's own HTTP/1.1 front: it offers the part of the `WebSocket`
 * interface the tunnel's relay uses, so the relay works the same whichever front served the
 * handshake. Client frames must be masked; fragmented messages are assembled (up to
 * `maxMessage`, else 1009); pings are answered; the closing handshake is answered and ends the
 * connection.
 */

import { closePayload, decodeText, OP_BINARY, OP_CLOSE, OP_PONG, OP_TEXT } from "./ws_frame.ts";
import type { FrameError } from "./ws_frame.ts";
import { FrameWriter, readFrames, type WsConn } from "./ws_conn.ts";

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

/** How long a sent close frame waits for the client's (ms). */
const CLOSE_WAIT = 1000;

const encoder = new TextEncoder();

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
  onopen: (() => void) | null = null;
  onmessage: ((e: WsMessage) => void) | null = null;
  onclose: ((e: WsClose) => void) | null = null;
  onerror: (() => void) | null = null;
  private readonly writer: FrameWriter;
  private closeSent = false;
  private closeCode = 1005;
  private closeReason = "";
  private ended = false;

  constructor(
    private readonly conn: WsConn,
    private readonly leftover: Uint8Array,
    readonly protocol: string,
    private readonly maxMessage: number,
    /** Called once the connection is closed. */
    private readonly onEnd: () => void,
  ) {
    this.writer = new FrameWriter(conn, false, () => this.end());
  }

  /** Bytes queued to the client and not yet written. */
  get bufferedAmount(): number {
    return this.writer.bufferedAmount;
  }

  /** Opens (the 101 was written) and starts reading; call after setting the handlers. */
  start(): void {
    this.readyState = OPEN;
    this.onopen?.();
    readFrames({
      conn: this.conn,
      leftover: this.leftover,
      maxMessage: this.maxMessage,
      masked: true,
      readSize: 16384,
      ended: () => this.ended,
      ping: (payload) => this.writer.send(OP_PONG, payload),
      closed: (code, reason) => this.closed(code, reason),
      message: (opcode, payload, aliased) => this.deliver(opcode, payload, aliased),
      refused: (err) => this.refused(err),
      // Gone without a closing handshake: 1006, as a browser reports it.
      lost: () => {
        this.closeCode = this.closeSent ? this.closeCode : 1006;
        this.end();
      },
    });
  }

  send(data: string | Uint8Array | ArrayBuffer): void {
    if (this.readyState !== OPEN) return;
    if (typeof data === "string") this.writer.send(OP_TEXT, encoder.encode(data));
    else this.writer.send(OP_BINARY, data instanceof Uint8Array ? data : new Uint8Array(data));
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
    this.writer.send(OP_CLOSE, closePayload(code, reason));
  }

  /** The client broke the protocol: close with its code, then end. */
  private refused(err: FrameError): void {
    this.closeCode = 1006;
    this.sendClose(err.code, "");
    this.readyState = CLOSING;
    this.writer.flushed.finally(() => this.end());
  }

  /** The client's closing handshake: answer with the same code, then close the connection. */
  private closed(code: number | undefined, reason: string): void {
    this.closeCode = code ?? 1005;
    this.closeReason = reason;
    this.sendClose(code, "");
    this.readyState = CLOSING;
    this.writer.flushed.finally(() => this.end());
  }

  private deliver(opcode: number, payload: Uint8Array, aliased: boolean): void {
    if (this.readyState !== OPEN) return;
    if (opcode === OP_TEXT) this.onmessage?.({ data: decodeText(payload) });
    else {
      const own = (aliased ? payload.slice() : payload) as Uint8Array<ArrayBuffer>;
      this.onmessage?.({ data: own.buffer });
    }
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
