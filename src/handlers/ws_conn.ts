/**
 * A WebSocket's raw connection, on either side of a tunnel (the member's, where scalwsd is the
 * client, and the client's when it came through scalwsd's own front): the one loop that reads
 * frames from it (RFC 6455 section 5), assembles fragmented messages and hands each frame or
 * message to its owner, and the queue that writes whole frames to it, masked as a client must or
 * not as a server sends. What a frame means (answer a ping, pass a close on) stays with the owner.
 */
import {
  encodeFrame,
  FrameError,
  FrameReader,
  MessageAssembler,
  OP_CLOSE,
  OP_PING,
  OP_PONG,
  parseClose,
} from "./ws_frame.ts";

/** The raw connection: a `Deno.Conn` or a test double. */
export type WsConn = Pick<Deno.Conn, "read" | "write" | "close">;

/** What `readFrames` needs: the connection, the limits, and the owner's handlers. */
export interface FrameLoop {
  readonly conn: WsConn;
  /** Bytes read past the handshake, read first. */
  readonly leftover: Uint8Array;
  /** Largest message (bytes); a larger frame or message is refused (1009). */
  readonly maxMessage: number;
  /** Reading a client's frames: each must be masked. */
  readonly masked: boolean;
  /** Bytes asked for by each read. */
  readonly readSize: number;
  /** True once the owner is done with the connection: the loop reads no more. */
  readonly ended: () => boolean;
  /** A ping to answer (the payload is a view valid during the call); pongs are dropped. */
  readonly ping: (payload: Uint8Array) => void;
  /** The peer's close frame (`code` undefined: it carried none): the loop stops. */
  readonly closed: (code: number | undefined, reason: string) => void;
  /**
   * A whole data message. `payload` is a view into the reader's buffer when `aliased` (copy it
   * to keep it past the call), else an array of its own.
   */
  readonly message: (opcode: number, payload: Uint8Array, aliased: boolean) => void;
  /** The peer broke the protocol (also thrown by `message`): the loop stops. */
  readonly refused: (err: FrameError) => void;
  /** The connection ended (EOF or a failed read) while `ended()` was false. */
  readonly lost: () => void;
  /** Called after each read's frames; a promise it returns is awaited (back-pressure). */
  readonly afterRead?: () => Promise<void> | undefined;
}

/** Reads frames until the owner is done, the peer breaks the protocol or the connection ends. */
export async function readFrames(o: FrameLoop): Promise<void> {
  const reader = new FrameReader(o.maxMessage, o.masked);
  const assembler = new MessageAssembler(o.maxMessage);
  /** Handles the complete frames read so far; false when the loop is over. */
  const drain = (): boolean => {
    try {
      for (let f = reader.next(); f !== null; f = reader.next()) {
        if (f.opcode === OP_PING) o.ping(f.payload);
        else if (f.opcode === OP_CLOSE) {
          const { code, reason } = parseClose(f.payload);
          o.closed(code, reason);
          return false;
        } else if (f.opcode !== OP_PONG) {
          const whole = assembler.add(f);
          if (whole !== null) o.message(assembler.opcode, whole, whole === f.payload);
        }
      }
      return true;
    } catch (err) {
      if (!(err instanceof FrameError)) throw err;
      o.refused(err);
      return false;
    }
  };
  if (o.leftover.length > 0) {
    reader.push(o.leftover);
    if (!drain()) return;
  }
  const buf = new Uint8Array(o.readSize);
  while (!o.ended()) {
    let n: number | null;
    try {
      n = await o.conn.read(buf);
    } catch {
      n = null;
    }
    if (n === null) {
      if (!o.ended()) o.lost();
      return;
    }
    reader.push(buf.subarray(0, n));
    if (!drain()) return;
    const wait = o.afterRead?.();
    if (wait !== undefined) await wait;
  }
}

async function writeAll(conn: WsConn, bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.length) done += await conn.write(bytes.subarray(done));
}

/** Writes frames in order, each whole; a failed write calls `failed` (the later ones still run). */
export class FrameWriter {
  /** Bytes queued and not yet written. */
  bufferedAmount = 0;
  #tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly conn: WsConn,
    /** Mask each frame with a fresh random key, as a client must. */
    private readonly masked: boolean,
    private readonly failed: () => void,
  ) {}

  /** Queues one final frame; `payload` is encoded at once (it may be reused after the call). */
  send(opcode: number, payload: Uint8Array): void {
    const bytes = encodeFrame(
      opcode,
      payload,
      this.masked ? crypto.getRandomValues(new Uint8Array(4)) : null,
    );
    this.bufferedAmount += bytes.length;
    this.#tail = this.#tail.then(() => writeAll(this.conn, bytes)).then(
      () => {
        this.bufferedAmount -= bytes.length;
      },
      this.failed,
    );
  }

  /** Settles once every frame queued so far is written or failed. */
  get flushed(): Promise<void> {
    return this.#tail;
  }
}
