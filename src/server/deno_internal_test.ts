/**
 * Fails loudly when a Deno upgrade removes or changes the internals scalwsd's listeners stand
 * on: SNI certificate selection through `listenTls` and HTTP served on one connection.
 */
import assert from "node:assert/strict";
import tls from "node:tls";
import http2 from "node:http2";
import { makePki } from "../base/_test_certs.ts";
import {
  headerEntries,
  internalsProblem,
  type KeyPair,
  listenTlsBySni,
  serveConnection,
} from "./deno_internal.ts";

/** The CN of the certificate the server presents for `servername`, and the ALPN chosen. */
function peek(port: number, ca: string, servername: string): Promise<{ cn: string; alpn: string }> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({
      host: "127.0.0.1",
      port,
      ca,
      servername,
      ALPNProtocols: ["h2", "http/1.1"],
    });
    s.once("secureConnect", () => {
      const cn = String(s.getPeerCertificate().subject?.CN ?? "");
      const alpn = String(s.alpnProtocol);
      s.end();
      s.once("close", () => resolve({ cn, alpn }));
    });
    s.once("error", reject);
  });
}

Deno.test("Deno internals for SNI and per-connection serving are present", () => {
  assert.equal(
    internalsProblem,
    undefined,
    `Deno ${Deno.version.deno} changed its internals: ${internalsProblem}. ` +
      "scalwsd's TLS listeners (src/server/deno_internal.ts) must be adapted.",
  );
});

Deno.test("listenTlsBySni picks the certificate by SNI and offers h2", async () => {
  const pki = await makePki();
  const a = await pki.issue("a", ["a.test"]);
  const b = await pki.issue("b", ["b.test"]);
  const pairs: Record<string, KeyPair> = {
    "a.test": { cert: await Deno.readTextFile(a.cert), key: await Deno.readTextFile(a.key) },
    "b.test": { cert: await Deno.readTextFile(b.cert), key: await Deno.readTextFile(b.key) },
  };
  const asked: string[] = [];
  const listener = listenTlsBySni({ hostname: "127.0.0.1", port: 0, reusePort: false }, (sni) => {
    asked.push(sni);
    return pairs[sni] ?? pairs["a.test"];
  });
  const accepted = (async () => {
    for await (const conn of listener) {
      (conn as Deno.TlsConn).handshake().catch(() => {}).finally(() => conn.close());
    }
  })();
  try {
    const port = listener.addr.port;
    assert.deepEqual(
      await peek(port, pki.ca, "b.test"),
      { cn: "b.test", alpn: "h2" },
      "the SNI resolver hook of Deno.listenTls no longer chooses the certificate",
    );
    assert.deepEqual(await peek(port, pki.ca, "a.test"), { cn: "a.test", alpn: "h2" });
    assert.deepEqual(asked, ["b.test", "a.test"]);
  } finally {
    listener.close();
    await accepted.catch(() => {});
    await pki.close();
  }
});

Deno.test("serveConnection serves HTTP/2 and HTTP/1.1 on one accepted TLS connection", async () => {
  const pki = await makePki();
  const a = await pki.issue("a", ["a.test"]);
  const pair = { cert: await Deno.readTextFile(a.cert), key: await Deno.readTextFile(a.key) };
  const listener = listenTlsBySni({ hostname: "127.0.0.1", port: 0, reusePort: false }, () => pair);
  const servers: Promise<void>[] = [];
  const accepted = (async () => {
    for await (const conn of listener) {
      const hs = await (conn as Deno.TlsConn).handshake();
      const s = serveConnection(
        conn,
        (req) => new Response(`${hs.alpnProtocol} ${req.url}`),
        () => new Response("error", { status: 500 }),
      );
      servers.push(s.finished);
    }
  })();
  try {
    const port = listener.addr.port;
    const session = http2.connect(`https://a.test:${port}`, {
      ca: pki.ca,
      host: "127.0.0.1",
      servername: "a.test",
    } as http2.SecureClientSessionOptions);
    const body = await new Promise<string>((resolve, reject) => {
      const req = session.request({ ":path": "/x?y=1" });
      let text = "";
      req.setEncoding("utf8");
      req.on("data", (d: string) => (text += d));
      req.on("end", () => resolve(text));
      req.on("error", reject);
      req.end();
    });
    await new Promise<void>((r) => session.close(() => r()));
    assert.equal(
      body,
      `h2 https://a.test:${port}/x?y=1`,
      "serveHttpOnConnection no longer serves h2",
    );

    const text = await new Promise<string>((resolve, reject) => {
      const s = tls.connect({
        host: "127.0.0.1",
        port,
        ca: pki.ca,
        servername: "a.test",
        ALPNProtocols: ["http/1.1"],
      });
      let out = "";
      s.setEncoding("utf8");
      s.once(
        "secureConnect",
        () => s.write(`GET /h1 HTTP/1.1\r\nhost: a.test\r\nconnection: close\r\n\r\n`),
      );
      s.on("data", (d: string) => (out += d));
      s.once("end", () => resolve(out));
      s.once("error", reject);
    });
    assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.ok(text.endsWith(`http/1.1 https://a.test/h1`), text);
  } finally {
    listener.close();
    await accepted.catch(() => {});
    await Promise.allSettled(servers);
    await pki.close();
  }
});

/** Echoes one WebSocket message through a server built by `serve`; the reply or the failure. */
async function echoThrough(serve: (l: Deno.Listener) => { finished: Promise<void> }) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const s = serve(listener);
  const ws = new WebSocket(`ws://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/`);
  const result = await new Promise<string>((resolve) => {
    ws.onopen = () => setTimeout(() => ws.send("hi"), 50);
    ws.onmessage = (e) => resolve(String(e.data));
    ws.onerror = () => resolve("error");
    ws.onclose = () => resolve("closed");
  });
  ws.close();
  await new Promise((r) => setTimeout(r, 20));
  return { result, listener, finished: s.finished };
}

function wsEcho(req: Request): Response {
  const { socket, response } = Deno.upgradeWebSocket(req);
  socket.onmessage = (e) => socket.send(`echo:${e.data}`);
  return response;
}

Deno.test("serveConnection still closes WebSockets (why HTTP/1.1 WebSockets go through scalwsd's own front)", async () => {
  let accepted: Promise<void> | undefined;
  const servers: Promise<void>[] = [];
  const { result, listener } = await echoThrough((l) => {
    accepted = (async () => {
      for await (const conn of l) {
        servers.push(
          serveConnection(conn, wsEcho, () => new Response("", { status: 500 })).finished,
        );
      }
    })();
    return { finished: Promise.resolve() };
  });
  listener.close();
  await accepted!.catch(() => {});
  await Promise.allSettled(servers);
  assert.notEqual(
    result,
    "echo:hi",
    "Deno now keeps WebSockets on per-connection servers: HTTP/2 WebSockets (RFC 8441) " +
      "could be considered",
  );
});

Deno.test("Deno's TLS handshake still tells the server no SNI name (why TLS listeners have a front)", async () => {
  // When this fails, Deno reports the SNI name: a TLS listener could then accept, handshake and
  // serve directly (cheaper than tls_relay.ts's hop through loopback).
  const pki = await makePki();
  try {
    const a = await pki.issue("a", ["a.test"]);
    const listener = Deno.listenTls({
      hostname: "127.0.0.1",
      port: 0,
      cert: await Deno.readTextFile(a.cert),
      key: await Deno.readTextFile(a.key),
      alpnProtocols: ["http/1.1"],
    });
    const accepted = (async () => {
      const conn = await listener.accept();
      const info = await conn.handshake();
      conn.close();
      return info as unknown as Record<string, unknown>;
    })();
    await peek(listener.addr.port, pki.ca, "a.test").catch(() => {});
    const info = await accepted;
    listener.close();
    assert.deepEqual(
      Object.keys(info).filter((k) => /name|sni/i.test(k)),
      [],
      `Deno ${Deno.version.deno} reports ${JSON.stringify(info)}: use it instead of the TLS relay`,
    );
    assert.ok(!JSON.stringify(info).includes("a.test"));
  } finally {
    await pki.close();
  }
});

Deno.test("headerEntries is what iterating Headers gives (Deno's iteration getter is still there)", () => {
  const h = new Headers([["X-B", "1"], ["a", "2"], ["x-b", "3"], ["Set-Cookie", "s=1"], [
    "set-cookie",
    "t=2",
  ]]);
  assert.deepEqual(headerEntries(h), [...h]);
  assert.deepEqual(headerEntries(h), [["a", "2"], ["set-cookie", "s=1"], ["set-cookie", "t=2"], [
    "x-b",
    "1, 3",
  ]]);
  const sym = Object.getOwnPropertySymbols(Headers.prototype).find((s) =>
    s.description === "iterable headers"
  );
  assert.ok(sym !== undefined, "Deno's Headers still iterate through Symbol(iterable headers)");
});
