import assert from "node:assert/strict";
import { encodeFrame, FrameReader, OP_CLOSE, OP_PING, OP_PONG, OP_TEXT } from "./ws_frame.ts";
import { ServerWebSocket, type WsClose } from "./ws_server.ts";

const MASK = new Uint8Array([1, 2, 3, 4]);
const enc = new TextEncoder();

/** A connected pair of loopback sockets: the server side and the client side. */
async function pair(): Promise<[Deno.Conn, Deno.Conn]> {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted = l.accept();
  const client = await Deno.connect({ hostname: "127.0.0.1", port: l.addr.port });
  const server = await accepted;
  l.close();
  return [server, client];
}

Deno.test("FrameReader for a client's frames wants them masked and unmasks them", () => {
  const r = new FrameReader(1000, true);
  r.push(encodeFrame(OP_TEXT, enc.encode("hi"), MASK));
  const f = r.next()!;
  assert.equal(new TextDecoder().decode(f.payload), "hi");
  const unmasked = new FrameReader(1000, true);
  unmasked.push(encodeFrame(OP_TEXT, enc.encode("hi"), null));
  assert.throws(() => unmasked.next(), /unmasked frame from the client/);
  // A server's frames carry no mask.
  assert.deepEqual([...encodeFrame(OP_TEXT, enc.encode("ok"), null)], [0x81, 2, 0x6f, 0x6b]);
});

Deno.test("ServerWebSocket: messages, pings and the closing handshake on a raw connection", async () => {
  const [server, client] = await pair();
  let ended = false;
  const ws = new ServerWebSocket(
    server,
    encodeFrame(OP_TEXT, enc.encode("early"), MASK),
    "",
    1 << 20,
    () => ended = true,
  );
  const got: unknown[] = [];
  let closed: WsClose | null = null;
  ws.onmessage = (e) => got.push(e.data);
  ws.onclose = (e) => closed = e;
  ws.start();
  await client.write(encodeFrame(OP_PING, enc.encode("p"), MASK));
  await client.write(encodeFrame(OP_TEXT, enc.encode("later"), MASK));
  ws.send("to client");
  const reader = new FrameReader(1 << 20);
  const buf = new Uint8Array(4096);
  const frames: [number, string][] = [];
  while (frames.length < 2) {
    const n = await client.read(buf);
    reader.push(buf.subarray(0, n!));
    for (let f = reader.next(); f !== null; f = reader.next()) {
      frames.push([f.opcode, new TextDecoder().decode(f.payload)]);
    }
  }
  assert.deepEqual(frames.sort(), [[OP_TEXT, "to client"], [OP_PONG, "p"]].sort());
  assert.deepEqual(got, ["early", "later"]);
  // The client closes with 4000: the server answers with the same code and ends.
  await client.write(encodeFrame(OP_CLOSE, new Uint8Array([0x0f, 0xa0, 0x62, 0x79]), MASK));
  const n = await client.read(buf);
  assert.deepEqual([...buf.subarray(0, 4)], [0x88, 2, 0x0f, 0xa0]);
  assert.equal(n, 4);
  assert.equal(await client.read(buf), null, "the server closed the connection");
  assert.deepEqual(closed, { code: 4000, reason: "by" });
  assert.equal(ended, true);
  client.close();
});
