/**
 * WebSockets through proxy routes with `websocket: true`. Deno.serve gives no raw access to an
 * upgraded client connection (`upgradeHttpRaw` is internal and not exposed in 2.9.6), so the
 * tunnel terminates the client's WebSocket with `Deno.upgradeWebSocket` and speaks WebSocket
 * to the member over the HTTP/1 client's upgraded connection, relaying messages both ways.
 * Pings are answered on each side; close codes and reasons are passed on; a member that
 * breaks the connection closes the client with 1011 (1014, "bad gateway", is refused by
 * common clients, Deno's included). Compression is not
 * negotiated with the member (`Sec-WebSocket-Extensions` is not forwarded).
 */
import type { HeaderSource, Socket, UpstreamResponse } from "../http1/mod.ts";
import { log } from "../observe/mod.ts";
import type { ClientRequest, Exchange, FrontUpgrade, RequestFields } from "../pipeline/mod.ts";
import { type Answer, FrontAnswer } from "../front/mod.ts";
import { ServerWebSocket } from "./ws_server.ts";
import { plain } from "../base/mod.ts";
import { closePayload, decodeText, OP_BINARY, OP_CLOSE, OP_PONG, OP_TEXT } from "./ws_frame.ts";
import type { FrameError } from "./ws_frame.ts";
import { FrameWriter, readFrames } from "./ws_conn.ts";

/** Largest message relayed from a member (16 MiB); a larger one closes with 1009. */
export const MAX_MESSAGE = 16 * 1024 * 1024;
/** Member reads pause while the client has more than this queued (1 MiB). */
const CLIENT_BACKLOG = 1024 * 1024;
/** After a close frame to the member, how long its answer is awaited (ms). */
const CLOSE_WAIT = 1000;

const UPGRADE = /(^|[\s,])websocket($|[\s,])/i;
const CONNECTION = /(^|[\s,])upgrade($|[\s,])/i;

/** A WebSocket handshake: GET with `Upgrade: websocket`, `Connection: upgrade` and a key. */
export function isWebSocketUpgrade(req: ClientRequest): boolean {
  if (req.method !== "GET") return false;
  const h = req.headers;
  const up = h.get("upgrade");
  if (up === null || !UPGRADE.test(up)) return false;
  const conn = h.get("connection");
  return conn !== null && CONNECTION.test(conn) && h.get("sec-websocket-key") !== null;
}

/** Request headers to a member for an upgrade: a copy without the extensions offer. */
export function upgradeHeaders(headers: RequestFields): HeaderSource {
  return new WithoutExtensions(headers);
}

/** A request's fields minus `Sec-WebSocket-Extensions`, walked without a copy. */
class WithoutExtensions implements HeaderSource {
  constructor(private readonly fields: RequestFields) {}
  forEach(fn: (value: string, name: string) => void, thisArg?: unknown): void {
    this.fields.forEach((value, name) => {
      if (name !== "sec-websocket-extensions") fn.call(thisArg, value, name);
    });
  }
}

/** Headers of the member's 101 that Deno's own 101 does not carry already. */
const OWN = new Set([
  "upgrade",
  "connection",
  "sec-websocket-accept",
  "sec-websocket-protocol",
  "sec-websocket-extensions",
  "content-length",
  "transfer-encoding",
  "date",
]);

function closeQuietly(s: Socket): void {
  try {
    s.close();
  } catch {
    // already closed
  }
}

/**
 * Answers the client's handshake after the member accepted it (101 in `res`) and starts
 * relaying. `cookie` is an affinity or sticky cookie to set.
 */
export function tunnel(ex: Exchange, res: UpstreamResponse, cookie: string | undefined): Answer {
  const up = res.upgrade!;
  let protocol: string | undefined;
  for (const [k, v] of res.headers) if (k === "sec-websocket-protocol") protocol = v;
  const front = ex.session.upgrade;
  if (front !== null) return frontTunnel(ex, front, res, protocol, cookie);
  let ws: { socket: WebSocket; response: Response };
  try {
    ws = Deno.upgradeWebSocket(ex.req as Request, protocol === undefined ? {} : { protocol });
  } catch (err) {
    closeQuietly(up.conn);
    ex.answered(400);
    return plain(400, `Bad Request: ${(err as Error).message}`);
  }
  const headers = ws.response.headers;
  for (const [k, v] of res.headers) if (!OWN.has(k)) headers.append(k, v);
  if (cookie !== undefined) headers.append("set-cookie", cookie);
  new Relay(ws.socket, up.conn, up.leftover).start();
  ex.answered(101);
  return ws.response;
}

/** Member 101 headers the client's 101 does not get (the front writes its own framing). */
const NOT_PASSED = new Set(["content-length", "transfer-encoding", "date", "connection"]);

/**
 * The client came through scalwsd's own front: the member's 101 (its `Sec-WebSocket-Accept`
 * answers the client's key, which was passed on) goes to the client, then the relay runs
 * between a server-side WebSocket on the client's raw connection and the member.
 */
function frontTunnel(
  ex: Exchange,
  front: FrontUpgrade,
  res: UpstreamResponse,
  protocol: string | undefined,
  cookie: string | undefined,
): Answer {
  const up = res.upgrade!;
  const headers: [string, string][] = [];
  for (const h of res.headers) if (!NOT_PASSED.has(h[0])) headers.push(h);
  if (cookie !== undefined) headers.push(["set-cookie", cookie]);
  ex.answered(101);
  return new FrontAnswer(101, headers, null, (written) => {
    if (!written) {
      closeQuietly(up.conn);
      return;
    }
    const client = front.handOver();
    const ws = new ServerWebSocket(
      client.conn,
      client.leftover,
      protocol ?? "",
      MAX_MESSAGE,
      client.ended,
    );
    new Relay(ws as unknown as WebSocket, up.conn, up.leftover).start();
    ws.start();
  });
}

/** A close code a close frame may carry (RFC 6455 section 7.4). */
function sendable(code: number): boolean {
  return (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) ||
    (code >= 3000 && code <= 4999);
}

const encoder = new TextEncoder();

/** One tunnel: the client's WebSocket on one side, the member's raw connection on the other. */
class Relay {
  private readonly writer: FrameWriter;
  /** A close frame went to the member. */
  private closeSent = false;
  /** The member connection is finished with. */
  private ended = false;

  constructor(
    private readonly client: WebSocket,
    private readonly member: Socket,
    private readonly leftover: Uint8Array,
  ) {
    this.writer = new FrameWriter(member, true, () => this.memberLost());
  }

  start(): void {
    const c = this.client;
    c.binaryType = "arraybuffer";
    c.onopen = () => this.readMember();
    c.onmessage = (e) => this.fromClient(e.data);
    c.onclose = (e) => this.clientClosed(e.code, e.reason);
    c.onerror = () => {};
  }

  private send(opcode: number, payload: Uint8Array): void {
    if (this.ended) return;
    this.writer.send(opcode, payload);
  }

  private fromClient(data: unknown): void {
    if (this.closeSent) return;
    if (typeof data === "string") this.send(OP_TEXT, encoder.encode(data));
    else this.send(OP_BINARY, new Uint8Array(data as ArrayBuffer));
  }

  /** The client's closing handshake is done: pass it on and wait briefly for the member's. */
  private clientClosed(code: number, reason: string): void {
    if (this.ended || this.closeSent) {
      this.end();
      return;
    }
    this.closeSent = true;
    // 1005: the client sent no code. Deno reports a client that vanished without a close frame
    // as 1006 or 0, codes no frame may carry: the member hears 1001, going away.
    if (code === 1005) this.send(OP_CLOSE, closePayload(undefined));
    else if (sendable(code)) this.send(OP_CLOSE, closePayload(code, reason));
    else this.send(OP_CLOSE, closePayload(1001, "client went away"));
    const timer = setTimeout(() => this.end(), CLOSE_WAIT);
    Deno.unrefTimer(timer);
  }

  private closeClient(code: number | undefined, reason: string): void {
    const c = this.client;
    if (c.readyState === WebSocket.CLOSED || c.readyState === WebSocket.CLOSING) return;
    try {
      if (code === undefined) c.close();
      else c.close(code, reason);
    } catch (err) {
      log("warn", "websocket_close_failed", { error: String(err) });
      c.close();
    }
  }

  /** The member broke the connection without a closing handshake. */
  private memberLost(): void {
    if (this.ended) return;
    this.end();
    this.closeClient(1011, "upstream connection lost");
  }

  /** A protocol error by the member: tell both sides. */
  private fail(err: FrameError): void {
    log("warn", "websocket_member_error", { error: err.message });
    if (!this.closeSent) {
      this.closeSent = true;
      this.send(OP_CLOSE, closePayload(err.code, ""));
    }
    this.writer.flushed.finally(() => this.end());
    this.closeClient(1011, "bad frame from upstream");
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.writer.flushed.finally(() => closeQuietly(this.member));
  }

  private readMember(): Promise<void> {
    return readFrames({
      conn: this.member,
      leftover: this.leftover,
      maxMessage: MAX_MESSAGE,
      masked: false,
      readSize: 65536,
      ended: () => this.ended,
      ping: (payload) => this.send(OP_PONG, payload),
      closed: (code, reason) => this.closed(code, reason),
      message: (opcode, payload) => this.deliver(opcode, payload),
      refused: (err) => this.fail(err),
      // EOF after our close frame is the normal end; before it, the member is gone.
      lost: () => this.closeSent ? this.end() : this.memberLost(),
      afterRead: () => this.client.bufferedAmount > CLIENT_BACKLOG ? this.backlog() : undefined,
    });
  }

  /** Member reads pause while the client has too much queued. */
  private async backlog(): Promise<void> {
    while (this.client.bufferedAmount > CLIENT_BACKLOG && !this.ended) {
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** The member's closing handshake: answer it, then close the client alike. */
  private closed(code: number | undefined, reason: string): void {
    if (!this.closeSent) {
      this.closeSent = true;
      this.send(OP_CLOSE, closePayload(code, ""));
      this.closeClient(code, reason);
    }
    this.end();
  }

  private deliver(opcode: number, payload: Uint8Array): void {
    if (this.client.readyState !== WebSocket.OPEN) return;
    if (opcode === OP_TEXT) this.client.send(decodeText(payload));
    else this.client.send(payload.slice());
  }
}
