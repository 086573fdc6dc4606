/** End-to-end tests of the HTTP/1.1 client towards TLS members, with a CA made by openssl. */

import assert from "node:assert/strict";
import { disposablePool } from "./_support/conn_pool.ts";
import type { MemberAddress } from "../src/net/member_address.ts";
import { Connector, ConnPool, send, type TlsSettings, UpstreamError } from "../src/http1/mod.ts";
import {
  bodyText,
  outbound,
  pattern,
  RawServer,
  sendOptions,
  sha256,
} from "../src/http1/_test_servers.ts";
import { makePki } from "../src/base/_test_certs.ts";

/** A throwaway CA and a server certificate for member.test and 127.0.0.1 (PEM texts). */
async function makeMemberPki(): Promise<{ dir: string; ca: string; cert: string; key: string }> {
  const pki = await makePki();
  const issued = await pki.issue("server", ["member.test", "127.0.0.1"]);
  return {
    dir: pki.dir,
    ca: pki.ca,
    cert: await Deno.readTextFile(issued.cert),
    key: await Deno.readTextFile(issued.key),
  };
}

const pki = await makeMemberPki();
addEventListener("unload", () => Deno.removeSync(pki.dir, { recursive: true }));

function address(port: number): MemberAddress {
  return { kind: "tcp", hostname: "127.0.0.1", port, canonical: `127.0.0.1:${port}` };
}

function tlsMember() {
  const ac = new AbortController();
  const server = Deno.serve(
    {
      hostname: "127.0.0.1",
      port: 0,
      cert: pki.cert,
      key: pki.key,
      signal: ac.signal,
      onListen() {},
    },
    async (req, info) => {
      const url = new URL(req.url);
      if (url.pathname === "/big") return new Response(pattern(0, 1 << 20));
      const body = await req.text();
      return new Response(
        `${req.method} ${url.pathname} ${body} ${(info.remoteAddr as Deno.NetAddr).port}`,
      );
    },
  );
  const close = async () => {
    ac.abort();
    await server.finished;
  };
  return { port: server.addr.port, close, [Symbol.asyncDispose]: close };
}

Deno.test("http1 tls: verified with the pool CA and server name, connection reused", async () => {
  await using m = tlsMember();
  const tls: TlsSettings = { caCerts: [pki.ca], serverName: "member.test" };
  using pool = disposablePool(new ConnPool(new Connector(address(m.port), tls)));
  const a = await bodyText(
    await send(
      pool,
      outbound("POST", "/x", { body: new TextEncoder().encode("hi") }),
      sendOptions(),
    ),
  );
  const b = await bodyText(await send(pool, outbound("GET", "/y"), sendOptions()));
  assert.match(a, /^POST \/x hi \d+$/);
  assert.equal(a.split(" ")[3], b.split(" ")[3]);
  const big = await send(pool, outbound("GET", "/big"), sendOptions());
  assert.equal(
    await sha256(big.body as ReadableStream<Uint8Array>),
    await sha256(pattern(0, 1 << 20)),
  );
});

Deno.test("http1 tls: without a server name the member's IP address is verified", async () => {
  await using m = tlsMember();
  using pool = disposablePool(
    new ConnPool(
      new Connector(address(m.port), { caCerts: [pki.ca], serverName: "" }),
    ),
  );
  assert.match(
    await bodyText(await send(pool, outbound("GET", "/ip"), sendOptions())),
    /^GET \/ip /,
  );
});

Deno.test("http1 tls: a wrong server name fails with kind tls", async () => {
  await using m = tlsMember();
  using pool = disposablePool(
    new ConnPool(
      new Connector(address(m.port), { caCerts: [pki.ca], serverName: "other.test" }),
    ),
  );
  await assert.rejects(send(pool, outbound("GET", "/"), sendOptions()), (err: unknown) => {
    assert.ok(err instanceof UpstreamError);
    assert.equal(err.phase, "connect");
    assert.equal(err.kind, "tls");
    assert.equal(err.written, false);
    assert.match(err.message, /other\.test/);
    return true;
  });
  assert.equal(pool.active, 0);
});

Deno.test("http1 tls: an unknown CA fails with kind tls", async () => {
  await using m = tlsMember();
  using pool = disposablePool(
    new ConnPool(
      new Connector(address(m.port), { caCerts: [], serverName: "member.test" }),
    ),
  );
  await assert.rejects(send(pool, outbound("GET", "/"), sendOptions()), {
    name: "UpstreamError",
    kind: "tls",
  });
});

Deno.test("http1 tls: system roots are trusted besides the pool CA", async (t) => {
  const store = Deno.env.get("DENO_TLS_CA_STORE") ?? "";
  if (store.includes("system")) {
    await t.step({ name: "Deno reads the system store itself here", ignore: true, fn: () => {} });
    return;
  }
  // Stand-in system bundle: SSL_CERT_FILE names our CA, the pool gives no CA of its own.
  await using m = tlsMember();
  const settings: TlsSettings = { caCerts: [], serverName: "member.test" };
  const previous = Deno.env.get("SSL_CERT_FILE");
  Deno.env.set("SSL_CERT_FILE", `${pki.dir}/ca.crt`);
  let first: Connector;
  try {
    first = new Connector(address(m.port), settings);
  } finally {
    if (previous === undefined) Deno.env.delete("SSL_CERT_FILE");
    else Deno.env.set("SSL_CERT_FILE", previous);
  }
  // A second member of the same pool shares the roots read for the first.
  using a = disposablePool(new ConnPool(first));
  using b = disposablePool(new ConnPool(new Connector(address(m.port), settings)));
  for (const pool of [a, b]) {
    assert.match(
      await bodyText(await send(pool, outbound("GET", "/sys"), sendOptions())),
      /^GET \/sys /,
    );
  }
});

Deno.test("http1 tls: a member that never finishes the handshake times out in phase connect", async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => release = r);
  await using server = new RawServer(() => held);
  const connector = new Connector(address(server.port), {
    caCerts: [pki.ca],
    serverName: "member.test",
  });
  try {
    const t0 = performance.now();
    const err = await connector.connect(150).then(() => null, (e) => e);
    assert.ok(err instanceof UpstreamError);
    assert.equal(err.phase, "connect");
    assert.equal(err.kind, "timeout");
    assert.equal(err.timeout, true);
    assert.ok(performance.now() - t0 < 1000);
  } finally {
    release();
  }
});

Deno.test("http1 tls: a close-delimited body ends at the member's close", async () => {
  const listener = Deno.listenTls({ hostname: "127.0.0.1", port: 0, cert: pki.cert, key: pki.key });
  const serve = (async () => {
    const conn = await listener.accept();
    const buf = new Uint8Array(4096);
    await conn.read(buf);
    await conn.write(new TextEncoder().encode("HTTP/1.1 200 OK\r\n\r\nuntil close"));
    conn.close();
  })();
  const pool = new ConnPool(
    new Connector(address(listener.addr.port), { caCerts: [pki.ca], serverName: "member.test" }),
  );
  try {
    assert.equal(
      await bodyText(await send(pool, outbound("GET", "/"), sendOptions())),
      "until close",
    );
    assert.equal(pool.idle, 0);
  } finally {
    await serve;
    pool.close();
    listener.close();
  }
});
