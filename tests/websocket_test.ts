import assert from "node:assert/strict";
import {
  adminFetch,
  app,
  disposableList,
  members,
  proxy,
  rawServer,
  readHead,
  request,
  scalwsYaml,
  startScalwsd,
  waitUntil,
} from "./_support/mod.ts";

interface WsMember extends AsyncDisposable {
  readonly address: string;
  /** Close codes and reasons the member's sockets saw. */
  readonly closes: [number, string][];
  /** Request headers of the last handshake. */
  headers: Headers | null;
  close(): Promise<void>;
}

/** A member answering WebSockets: echoes, says its name on "who", closes on "close:CODE". */
function wsMember(name: string): WsMember {
  const sockets = new Set<WebSocket>();
  const close = async () => {
    for (const s of sockets) s.close();
    await server.shutdown();
  };
  const m: WsMember = {
    address: "",
    closes: [],
    headers: null,
    close,
    [Symbol.asyncDispose]: close,
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    if (req.headers.get("upgrade") !== "websocket") return new Response(name);
    m.headers = new Headers(req.headers);
    const offered = req.headers.get("sec-websocket-protocol") ?? "";
    const { socket, response } = Deno.upgradeWebSocket(
      req,
      offered.includes("chat") ? { protocol: "chat" } : {},
    );
    sockets.add(socket);
    socket.onmessage = (e) => {
      if (typeof e.data !== "string") return socket.send(e.data);
      if (e.data === "who") return socket.send(name);
      if (e.data.startsWith("close:")) {
        return socket.close(Number(e.data.slice(6)), "member says bye");
      }
      socket.send("echo:" + e.data);
    };
    socket.onclose = (e) => {
      sockets.delete(socket);
      m.closes.push([e.code, e.reason]);
    };
    return response;
  });
  (m as { address: string }).address = `127.0.0.1:${server.addr.port}`;
  return m;
}

/** A client WebSocket with a message queue. */
class Client implements AsyncDisposable {
  readonly ws: WebSocket;
  private readonly queue: unknown[] = [];
  private wake: (() => void) | null = null;
  readonly closed: Promise<CloseEvent>;
  readonly opened: Promise<void>;

  constructor(url: string, init: { protocols?: string[]; headers?: Record<string, string> } = {}) {
    this.ws = new WebSocket(url, init as unknown as string[]);
    this.ws.binaryType = "arraybuffer";
    this.opened = new Promise((resolve, reject) => {
      this.ws.onopen = () => resolve();
      this.ws.onerror = () => reject(new Error("websocket failed"));
    });
    this.opened.catch(() => {});
    this.closed = new Promise((resolve) => (this.ws.onclose = resolve));
    this.ws.onmessage = (e) => {
      this.queue.push(e.data);
      this.wake?.();
    };
  }

  async next(): Promise<unknown> {
    const deadline = Date.now() + 5000;
    while (this.queue.length === 0) {
      if (Date.now() > deadline) throw new Error("no message within 5 s");
      await new Promise<void>((r) => {
        this.wake = r;
        setTimeout(r, 50);
      });
    }
    return this.queue.shift();
  }

  /** Closes the socket (if still open) and waits for the close. */
  async [Symbol.asyncDispose](): Promise<void> {
    this.ws.close();
    await this.closed;
  }
}

/** Pool ws (`pool` its settings) behind application a, with WebSockets unless `websocket` is false. */
function config(pool: Record<string, unknown>, websocket = true): string {
  return scalwsYaml({
    server: { default_host: "a.test" },
    upstreams: { ws: pool },
    apps: [app(proxy("ws", websocket ? { websocket: true } : {}), {
      routes: [{ path: "/plain", runtime: proxy("ws") }],
    })],
  });
}

Deno.test("websocket: messages both ways, the subprotocol, and close codes from either side", async () => {
  await using m = wsMember("a");
  await using s = await startScalwsd(config({ members: members(m) }));
  const ws = s.url.replace("http:", "ws:");
  const c = new Client(`${ws}/chat?room=1`, { protocols: ["chat"] });
  await c.opened;
  assert.equal(c.ws.protocol, "chat");
  c.ws.send("hi");
  assert.equal(await c.next(), "echo:hi");
  c.ws.send(new Uint8Array([1, 2, 3]));
  assert.deepEqual(new Uint8Array((await c.next()) as ArrayBuffer), new Uint8Array([1, 2, 3]));
  const big = new Uint8Array(300_000).map((_, i) => i & 0xff);
  c.ws.send(big);
  assert.deepEqual(new Uint8Array((await c.next()) as ArrayBuffer), big);
  assert.equal(m.headers?.get("x-forwarded-for"), "127.0.0.1");
  assert.equal(m.headers?.get("host"), m.address);
  c.ws.close(4000, "client bye");
  const closed = await c.closed;
  assert.equal(closed.code, 4000);
  await waitUntil(() => m.closes.length === 1, { what: "the member's close" });
  assert.deepEqual(m.closes[0], [4000, "client bye"]);

  const d = new Client(`${ws}/chat`);
  await d.opened;
  assert.equal(d.ws.protocol, "");
  d.ws.send("close:4001");
  const e = await d.closed;
  assert.deepEqual([e.code, e.reason], [4001, "member says bye"]);

  // Without websocket: true the upgrade is not passed on.
  const plain = new Client(`${ws}/plain`);
  await assert.rejects(plain.opened);
  await plain.closed;
});

Deno.test("websocket: the pool's policy and affinity choose the member; tunnels are not in flight", async () => {
  await using ms = disposableList([wsMember("a"), wsMember("b")]);
  await using s = await startScalwsd(
    config({ members: members(...ms), balance: "hash", hash: { by: "cookie" } }),
  );
  const ws = s.url.replace("http:", "ws:");
  await using clients = disposableList<Client>();
  // An affinity cookie from a plain request pins the member of later WebSockets.
  const pins = new Map<string, string>();
  for (let i = 0; pins.size < 2 && i < 40; i++) {
    const r = await request(s.url + "/plain", {
      headers: { host: "a.test", cookie: `SCALWS_AFFINITY=${i}` },
    });
    const cookie = r.headers.get("set-cookie")?.split(";")[0];
    if (cookie !== undefined) pins.set(r.text, cookie);
  }
  assert.equal(pins.size, 2);
  for (const [name, cookie] of pins) {
    for (let i = 0; i < 3; i++) {
      const c = new Client(`${ws}/`, { headers: { cookie } });
      clients.push(c);
      await c.opened;
      c.ws.send("who");
      assert.equal(await c.next(), name);
    }
  }
  // Six tunnels are open; none of them counts as a request in flight.
  const pool = await (await adminFetch(s.adminSocket, "/v1/upstreams/ws")).json();
  assert.deepEqual(pool.members.map((m: { in_flight: number }) => m.in_flight), [0, 0]);
});

Deno.test("websocket: least_conn does not count open tunnels", async () => {
  await using ms = disposableList([wsMember("a"), wsMember("b")]);
  await using s = await startScalwsd(config({ members: members(...ms), balance: "least_conn" }));
  const ws = s.url.replace("http:", "ws:");
  await using clients = disposableList<Client>();
  const c = new Client(`${ws}/`);
  clients.push(c);
  await c.opened;
  c.ws.send("who");
  const tunnelled = String(await c.next());
  // Were the open tunnel counted, every request would go to the other member.
  const seen: string[] = [];
  for (let i = 0; i < 4; i++) {
    seen.push((await request(s.url + "/plain", { headers: { host: "a.test" } })).text);
  }
  assert.ok(seen.includes(tunnelled), `${seen} avoid ${tunnelled}`);
  assert.deepEqual(seen.toSorted(), ["a", "a", "b", "b"]);
});

/** The raw response head to a WebSocket handshake sent over a fresh connection. */
async function handshake(port: number, extra = ""): Promise<string> {
  using conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode(
    "GET / HTTP/1.1\r\nhost: a.test\r\nupgrade: websocket\r\nconnection: Upgrade\r\n" +
      "sec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n" + extra +
      "\r\n",
  ));
  return await readHead(conn);
}

Deno.test("websocket: one attempt only, and no compression offer reaches the member", async () => {
  const dead = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const deadAddr = `127.0.0.1:${(dead.addr as Deno.NetAddr).port}`;
  dead.close();
  await using live = wsMember("live");
  await using s = await startScalwsd(config({
    members: members(deadAddr, live),
    retries: 1,
    passive_health: { failures: 0 },
  }));
  const port = Number(new URL(s.url).port);
  // Round robin starts with the refused member: the handshake is not retried on the other.
  const head = await handshake(port);
  assert.match(head, /^HTTP\/1\.1 502 /);
  const next = await handshake(port, "sec-websocket-extensions: permessage-deflate\r\n");
  assert.match(next, /^HTTP\/1\.1 101 /);
  assert.match(next, /\r\nsec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK\+xOo=\r\n/i);
  // The refused member's turn again: a GET is retried on the other.
  const get = await request(s.url + "/plain", { headers: { host: "a.test" } });
  assert.deepEqual([get.status, get.text], [200, "live"]);
  await waitUntil(() => live.headers !== null, { what: "the handshake at the member" });
  assert.equal(live.headers!.get("sec-websocket-extensions"), null);
});

Deno.test("websocket: fragments and pings from the member; a broken member closes the client with 1011", async () => {
  const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  let pong: number[] = [];
  await using member = rawServer(async (conn) => {
    const head = await readHead(conn);
    const key = /sec-websocket-key: *(\S+)/i.exec(head)![1];
    const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(key + GUID));
    const accept = btoa(String.fromCharCode(...new Uint8Array(digest)));
    // The 101 and the first frames in one write: the tunnel must keep the bytes after the head.
    const hello = new TextEncoder().encode(
      "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\n" +
        `sec-websocket-accept: ${accept}\r\n\r\n`,
    );
    const frames = new Uint8Array([
      0x01,
      3,
      0x68,
      0x65,
      0x6c, // text "hel", not final
      0x89,
      2,
      0x70,
      0x31, // ping "p1" between the fragments
      0x80,
      2,
      0x6c,
      0x6f, // continuation "lo", final
    ]);
    const out = new Uint8Array(hello.length + frames.length);
    out.set(hello);
    out.set(frames, hello.length);
    await conn.write(out);
    const buf = new Uint8Array(64);
    const n = await conn.read(buf);
    pong = [...buf.subarray(0, n ?? 0)];
    conn.close();
  });
  await using s = await startScalwsd(config({ members: members(member) }));
  const c = new Client(s.url.replace("http:", "ws:") + "/");
  await c.opened;
  assert.equal(await c.next(), "hello");
  const closed = await c.closed;
  assert.deepEqual([closed.code, closed.reason], [1011, "upstream connection lost"]);
  // A masked pong (0x8a, mask bit, length 2) carrying the ping's payload.
  assert.deepEqual(pong.slice(0, 2), [0x8a, 0x82]);
  const mask = pong.slice(2, 6);
  assert.deepEqual([pong[6] ^ mask[0], pong[7] ^ mask[1]], [0x70, 0x31]);
});

Deno.test("websocket: a reload that adds websocket: true keeps the port, and WebSockets then pass", async () => {
  await using m = wsMember("a");
  const pool = { members: members(m) };
  await using s = await startScalwsd(config(pool, false));
  const port = s.server.bound.get("http")!.port;
  const before = new Client(s.url.replace("http:", "ws:") + "/");
  await assert.rejects(before.opened);
  await before.closed;
  await s.write(config(pool));
  const r = await s.server.reload();
  assert.equal(r.ok, true);
  assert.equal(s.server.bound.get("http")!.port, port);
  const after = new Client(s.url.replace("http:", "ws:") + "/");
  await after.opened;
  after.ws.send("who");
  assert.equal(await after.next(), "a");
  after.ws.close();
  await after.closed;
});

Deno.test("websocket: a client that vanishes is reported to the member as 1001", async () => {
  await using m = wsMember("a");
  await using s = await startScalwsd(config({ members: members(m) }));
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(s.url).port) });
  await conn.write(new TextEncoder().encode(
    "GET / HTTP/1.1\r\nhost: a.test\r\nupgrade: websocket\r\nconnection: Upgrade\r\n" +
      "sec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
  ));
  assert.match(await readHead(conn), /^HTTP\/1\.1 101 /);
  await waitUntil(() => m.headers !== null, { what: "the member's handshake" });
  conn.close();
  await waitUntil(() => m.closes.length === 1, { what: "the member's close" });
  assert.deepEqual(m.closes[0], [1001, "client went away"]);
});
