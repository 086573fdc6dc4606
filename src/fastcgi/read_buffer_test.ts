/**
 * A FastCGI connection's read buffer holds a page up to 64 KiB whole: the page is read at once
 * and copied out once, into a buffer with room for the answer's head (`claimHeadRoom` takes it).
 * Failed before (16 KiB buffers, grown to 32 KiB): the first part of the page was copied out
 * before a later read moved the buffer, into an array of its own, so the body had no head room
 * (the front copied it again); over TCP WordPress's page took two reads (strace).
 */
import assert from "node:assert/strict";
import { Connector } from "../http1/connector.ts";
import type { Socket } from "../http1/types.ts";
import { claimHeadRoom, giveHeadRoom } from "../wire/mod.ts";
import { concat, end, FakeFcgiServer, readRequest, stdout, writeFull } from "./_fake_server.ts";
import { FcgiConns } from "./conns.ts";
import { fcgiSend, type FcgiSendOptions } from "./fcgi_send.ts";
import { ParamsBuffer } from "./params.ts";

/** A connector whose sockets count their reads. */
class CountingConnector extends Connector {
  reads = 0;
  override async connect(timeoutMs: number): Promise<Socket> {
    const s = await super.connect(timeoutMs);
    const read = s.read.bind(s);
    s.read = (b: Uint8Array) => {
      this.reads++;
      return read(b);
    };
    return s;
  }
}

function get() {
  const params = new ParamsBuffer(16);
  params.add("REQUEST_METHOD", "GET");
  params.add("SCRIPT_FILENAME", "/srv/index.php");
  return { method: "GET", params, body: null, bodyLength: 0 };
}

const options: FcgiSendOptions = { connectTimeout: 1000, responseTimeout: 5000 };

/** A 60 KB page in 8 KiB records, as PHP-FPM writes one, all at once. */
const piece = new Uint8Array(8184).fill(0x61);
const PIECES = 7;
const page = concat([
  stdout("Content-Type: text/html\r\n\r\n"),
  ...Array.from({ length: PIECES }, () => stdout(piece)),
  stdout(""),
  end(),
]);

for (const tcp of [true, false]) {
  Deno.test(`a 60 KB page over ${tcp ? "TCP" : "a Unix socket"} is read whole and copied once`, async () => {
    const server = new FakeFcgiServer(async (conn) => {
      if ((await readRequest(conn)) === null) return;
      await writeFull(conn, page);
    }, { tcp });
    await using _ = { [Symbol.asyncDispose]: () => server.close() };
    const address = tcp ? `127.0.0.1:${server.port}` : `unix:${server.path}`;
    const connector = new CountingConnector(
      tcp
        ? { kind: "tcp", hostname: "127.0.0.1", port: server.port, canonical: address }
        : { kind: "unix", path: server.path, canonical: address },
      null,
    );
    const conns = new FcgiConns(connector, { address, maxConns: 1, counted: false });
    // The second request runs on the first one's buffers (kept for the next connection).
    let fewest = Infinity;
    for (let i = 0; i < 3; i++) {
      const before = connector.reads;
      const res = await fcgiSend(conns, get(), options);
      const body = res.body;
      assert.ok(body instanceof Uint8Array);
      assert.equal(body.length, PIECES * piece.length);
      assert.ok(body.every((b) => b === 0x61));
      // Copied once, with room for the head: the front writes head and body from it.
      const claimed = claimHeadRoom(body, 100);
      assert.ok(claimed !== null, "the body has no head room (copied out twice)");
      giveHeadRoom(claimed);
      fewest = Math.min(fewest, connector.reads - before);
    }
    // Over a Unix socket the pieces may come apart; over TCP the low-water mark holds them.
    if (tcp) assert.equal(fewest, 1, `${fewest} reads for one page`);
  });
}
