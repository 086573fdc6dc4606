/** End-to-end tests of the HTTP/1.1 client against Deno.serve members on loopback. */

import assert from "node:assert/strict";
import { disposablePool } from "./_support/conn_pool.ts";
import { sleep, tempDir } from "./_support/mod.ts";
import type { MemberAddress } from "../src/net/member_address.ts";
import { ManualClock } from "../src/base/clock.ts";
import {
  Connector,
  ConnPool,
  type FinishListener,
  send,
  type UpstreamResponse,
} from "../src/http1/mod.ts";
import {
  bodyBytes,
  bodyText,
  outbound,
  pattern,
  patternStream,
  sendOptions,
  sha256,
} from "../src/http1/_test_servers.ts";

interface Echo {
  method: string;
  url: string;
  headers: [string, string][];
  body: string;
  port: number;
}

/** A Deno.serve member answering with what it received, plus a few special paths. */
function member(options: { hostname?: string; path?: string } = {}) {
  const ac = new AbortController();
  const handler = async (req: Request, info: Deno.ServeHandlerInfo<Deno.Addr>) => {
    const url = new URL(req.url);
    const port = info.remoteAddr.transport === "tcp" ? info.remoteAddr.port : 0;
    switch (url.pathname) {
      case "/slow":
        await sleep(60);
        return new Response(String(port));
      case "/port":
        return new Response(String(port));
      case "/empty":
        return new Response(null, { status: 204 });
      case "/not-modified":
        return new Response(null, { status: 304, headers: { etag: '"x"' } });
      case "/chunked":
        return new Response(patternStream(300_000, 10_000));
      case "/download":
        return new Response(patternStream(5 * 1024 * 1024));
      case "/cookies": {
        const h = new Headers();
        h.append("set-cookie", "a=1");
        h.append("set-cookie", "b=2");
        return new Response("c", { headers: h });
      }
      case "/hash":
        return new Response(await sha256(new Uint8Array(await req.arrayBuffer())));
    }
    let body: string;
    try {
      body = await req.text();
    } catch {
      return new Response(null, { status: 400 }); // the client gave up mid-upload
    }
    const echo: Echo = {
      method: req.method,
      url: url.pathname + url.search,
      headers: [...req.headers],
      body,
      port,
    };
    return Response.json(echo);
  };
  const server = options.path !== undefined
    ? Deno.serve({ path: options.path, signal: ac.signal, onListen() {} }, handler)
    : Deno.serve({
      hostname: options.hostname ?? "127.0.0.1",
      port: 0,
      signal: ac.signal,
      onListen() {},
    }, handler);
  const close = async () => {
    ac.abort();
    await server.finished;
  };
  return { server, close, [Symbol.asyncDispose]: close };
}

function tcp(hostname: string, port: number): MemberAddress {
  const canonical = hostname.includes(":") ? `[${hostname}]:${port}` : `${hostname}:${port}`;
  return { kind: "tcp", hostname, port, canonical };
}

function poolFor(
  server: { addr: Deno.Addr },
  clock?: ManualClock,
  idleTimeout = 60_000,
) {
  const addr = server.addr as Deno.NetAddr;
  return disposablePool(
    new ConnPool(new Connector(tcp(addr.hostname, addr.port), null), {
      maxIdle: 32,
      idleTimeout,
      clock,
    }),
  );
}

async function echo(res: UpstreamResponse): Promise<Echo> {
  return JSON.parse(await bodyText(res));
}

function header(e: Echo, name: string): string | undefined {
  return e.headers.find(([n]) => n === name)?.[1];
}

Deno.test("http1 client: GET with a Content-Length response, connection kept", async () => {
  await using m = member();
  using pool = poolFor(m.server);
  const res = await send(pool, outbound("GET", "/a/b?c=d&e"), sendOptions());
  assert.equal(res.status, 200);
  assert.equal(res.statusText, "OK");
  assert.ok(res.body instanceof Uint8Array);
  assert.ok(res.headers.some(([n, v]) => n === "content-type" && v === "application/json"));
  // What the proxy handler does with it: the shapes fit `new Response()` as they are.
  const forwarded = new Response(res.body, { status: res.status, headers: res.headers });
  const e: Echo = await forwarded.json();
  assert.equal(e.method, "GET");
  assert.equal(e.url, "/a/b?c=d&e");
  assert.equal(header(e, "host"), "member.test");
  assert.equal(pool.idle, 1);
  assert.equal(pool.active, 0);
});

Deno.test("http1 client: POST with a byte body sends Content-Length", async () => {
  await using m = member();
  using pool = poolFor(m.server);
  const body = new TextEncoder().encode("name=value&x=1");
  const e = await echo(await send(pool, outbound("POST", "/form", { body }), sendOptions()));
  assert.equal(e.method, "POST");
  assert.equal(e.body, "name=value&x=1");
  assert.equal(header(e, "content-length"), "14");
  assert.equal(header(e, "transfer-encoding"), undefined);
  const empty = await echo(await send(pool, outbound("POST", "/none"), sendOptions()));
  assert.equal(header(empty, "content-length"), "0");
  assert.equal(empty.body, "");
});

Deno.test("http1 client: stream bodies go chunked, or with their known length", async () => {
  await using m = member();
  using pool = poolFor(m.server);
  const chunked = await echo(
    await send(
      pool,
      outbound("PUT", "/up", {
        body: ReadableStream.from(["ab", "", "cd", "e"].map((s) => new TextEncoder().encode(s))),
      }),
      sendOptions(),
    ),
  );
  assert.equal(chunked.body, "abcde");
  assert.equal(header(chunked, "transfer-encoding"), "chunked");
  assert.equal(header(chunked, "content-length"), undefined);
  const sized = await echo(
    await send(
      pool,
      outbound("PUT", "/up", {
        body: ReadableStream.from([new TextEncoder().encode("hello")]),
        bodyLength: 5,
      }),
      sendOptions(),
    ),
  );
  assert.equal(sized.body, "hello");
  assert.equal(header(sized, "content-length"), "5");
  assert.equal(header(sized, "transfer-encoding"), undefined);
});

Deno.test("http1 client: a stream body of the wrong length fails as the client's fault", async () => {
  await using m = member();
  using pool = poolFor(m.server);
  const short = outbound("PUT", "/up", {
    body: ReadableStream.from([new Uint8Array(3)]),
    bodyLength: 5,
  });
  await assert.rejects(send(pool, short, sendOptions()), {
    name: "UpstreamError",
    kind: "client",
    phase: "write",
  });
  const long = outbound("PUT", "/up", {
    body: ReadableStream.from([new Uint8Array(9)]),
    bodyLength: 5,
  });
  await assert.rejects(send(pool, long, sendOptions()), {
    name: "UpstreamError",
    kind: "client",
  });
  assert.equal(pool.active, 0);
});

Deno.test("http1 client: a chunked response is decoded intact", async () => {
  await using m = member();
  using pool = poolFor(m.server);
  const res = await send(pool, outbound("GET", "/chunked"), sendOptions());
  assert.ok(!res.headers.some(([n]) => n === "transfer-encoding"));
  const got = await bodyBytes(res);
  assert.deepEqual(got, pattern(0, 300_000));
  assert.equal(pool.idle, 1);
});

Deno.test("http1 client: Set-Cookie headers stay separate", async () => {
  await using m = member();
  using pool = poolFor(m.server);
  const res = await send(pool, outbound("GET", "/cookies"), sendOptions());
  assert.deepEqual(res.headers.filter(([n]) => n === "set-cookie"), [["set-cookie", "a=1"], [
    "set-cookie",
    "b=2",
  ]]);
});

Deno.test("http1 client: HEAD, 204 and 304 have no body and keep the connection", async () => {
  await using m = member();
  using pool = poolFor(m.server);
  const head = await send(pool, outbound("HEAD", "/port"), sendOptions());
  assert.equal(head.body, null);
  assert.ok(head.headers.some(([n]) => n === "content-length"));
  const empty = await send(pool, outbound("GET", "/empty"), sendOptions());
  assert.equal(empty.status, 204);
  assert.equal(empty.body, null);
  const nm = await send(pool, outbound("GET", "/not-modified"), sendOptions());
  assert.equal(nm.status, 304);
  assert.equal(nm.body, null);
  const port = await bodyText(await send(pool, outbound("GET", "/port"), sendOptions()));
  assert.ok(Number(port) > 0);
  assert.equal(pool.idle, 1);
});

Deno.test("http1 client: keep-alive reuses one connection for sequential requests", async () => {
  await using m = member();
  using pool = poolFor(m.server);
  const ports = new Set<string>();
  for (let i = 0; i < 10; i++) {
    ports.add(await bodyText(await send(pool, outbound("GET", "/port"), sendOptions())));
  }
  assert.equal(ports.size, 1);
  assert.equal(pool.idle, 1);
});

Deno.test("http1 client: the last connection released is reused first (LIFO)", async () => {
  await using m = member();
  using pool = poolFor(m.server);
  const slow = send(pool, outbound("GET", "/slow"), sendOptions());
  const fast = send(pool, outbound("GET", "/port"), sendOptions());
  const fastPort = await bodyText(await fast);
  const slowPort = await bodyText(await slow);
  assert.notEqual(fastPort, slowPort);
  assert.equal(pool.idle, 2);
  // The slow one came back last.
  assert.equal(
    await bodyText(await send(pool, outbound("GET", "/port"), sendOptions())),
    slowPort,
  );
});

Deno.test("http1 client: idle connections past the idle timeout are not reused", async () => {
  await using m = member();
  const clock = new ManualClock();
  using pool = poolFor(m.server, clock, 1000);
  const first = await bodyText(await send(pool, outbound("GET", "/port"), sendOptions()));
  clock.advance(999);
  assert.equal(await bodyText(await send(pool, outbound("GET", "/port"), sendOptions())), first);
  clock.advance(1000);
  const third = await bodyText(await send(pool, outbound("GET", "/port"), sendOptions()));
  assert.notEqual(third, first);
  assert.equal(pool.idle, 1);
});

Deno.test("http1 client: hop-by-hop headers are dropped and X-Forwarded-* replaced for untrusted peers", async () => {
  await using m = member();
  using pool = poolFor(m.server);
  const req = outbound("GET", "/h", {
    headers: [
      ["Connection", "keep-alive, X-Secret"],
      ["Keep-Alive", "timeout=5"],
      ["TE", "trailers"],
      ["Upgrade", "h2c"],
      ["Proxy-Connection", "keep-alive"],
      ["X-Secret", "1"],
      ["X-Forwarded-For", "6.6.6.6"],
      ["X-Forwarded-Proto", "http"],
      ["X-Forwarded-Host", "evil.example"],
      ["Proxy-Authorization", "Basic eA=="],
      ["Accept", "text/plain"],
    ],
    peer: "192.0.2.10",
  });
  const e = await echo(await send(pool, req, sendOptions()));
  for (const name of ["keep-alive", "te", "upgrade", "proxy-connection", "x-secret"]) {
    assert.equal(header(e, name), undefined, name);
  }
  assert.equal(header(e, "x-forwarded-for"), "192.0.2.10");
  assert.equal(header(e, "x-forwarded-proto"), "https");
  assert.equal(header(e, "x-forwarded-host"), "www.example.com");
  assert.equal(header(e, "proxy-authorization"), "Basic eA==");
  assert.equal(header(e, "accept"), "text/plain");
});

Deno.test("http1 client: X-Forwarded-* from a trusted peer are kept and extended", async () => {
  await using m = member();
  using pool = poolFor(m.server);
  const req = outbound("GET", "/h", {
    headers: [
      ["X-Forwarded-For", "203.0.113.7"],
      ["X-Forwarded-Proto", "http"],
      ["X-Forwarded-Host", "front.example"],
    ],
    peer: "10.0.0.2",
    trusted: true,
  });
  const e = await echo(await send(pool, req, sendOptions()));
  assert.equal(header(e, "x-forwarded-for"), "203.0.113.7, 10.0.0.2");
  assert.equal(header(e, "x-forwarded-proto"), "http");
  assert.equal(header(e, "x-forwarded-host"), "front.example");
});

Deno.test("http1 client: 5 MiB streamed up and down arrive intact", async () => {
  await using m = member();
  using pool = poolFor(m.server);
  const size = 5 * 1024 * 1024;
  const expected = await sha256(patternStream(size));
  const chunked = outbound("POST", "/hash", { body: patternStream(size, 100_000) });
  assert.equal(await bodyText(await send(pool, chunked, sendOptions())), expected);
  const sized = outbound("POST", "/hash", {
    body: patternStream(size, 33_333),
    bodyLength: size,
  });
  assert.equal(await bodyText(await send(pool, sized, sendOptions())), expected);

  class Count implements FinishListener {
    calls: [boolean, number][] = [];
    bodyFinished(ok: boolean, bytes: number): void {
      this.calls.push([ok, bytes]);
    }
  }
  const finish = new Count();
  const res = await send(pool, outbound("GET", "/download"), {
    ...sendOptions(),
    onFinish: finish,
  });
  assert.ok(res.body instanceof ReadableStream);
  assert.deepEqual(finish.calls, []);
  assert.equal(await sha256(res.body), expected);
  assert.deepEqual(finish.calls, [[true, size]]);
  assert.equal(pool.active, 0);
  assert.equal(pool.idle, 1);
});

Deno.test("http1 client: cancelling a streamed body closes its connection", async () => {
  await using m = member();
  using pool = poolFor(m.server);
  const res = await send(pool, outbound("GET", "/download"), sendOptions());
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  assert.equal((await reader.read()).done, false);
  assert.equal(pool.active, 1);
  await reader.cancel();
  assert.equal(pool.active, 0);
  assert.equal(pool.idle, 0);
});

Deno.test("http1 client: Unix socket member", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/member.sock`;
  await using _m = member({ path });
  using pool = disposablePool(
    new ConnPool(new Connector({ kind: "unix", path, canonical: `unix:${path}` }, null)),
  );
  const e = await echo(
    await send(
      pool,
      outbound("POST", "/u", { body: new TextEncoder().encode("over unix") }),
      sendOptions(),
    ),
  );
  assert.equal(e.body, "over unix");
  await send(pool, outbound("GET", "/port"), sendOptions()).then(bodyText);
  assert.equal(pool.idle, 1);
});

Deno.test("http1 client: IPv6 loopback member", async (t) => {
  let v6: ReturnType<typeof member>;
  try {
    v6 = member({ hostname: "::1" });
  } catch {
    await t.step({ name: "no IPv6 loopback on this host", ignore: true, fn: () => {} });
    return;
  }
  await using m = v6;
  using pool = poolFor(m.server);
  const e = await echo(await send(pool, outbound("GET", "/v6"), sendOptions()));
  assert.equal(e.url, "/v6");
  assert.equal(pool.idle, 1);
});

Deno.test("http1 client: a unix member refuses TLS settings", () => {
  assert.throws(
    () =>
      new Connector({ kind: "unix", path: "/x.sock", canonical: "unix:/x.sock" }, {
        caCerts: [],
        serverName: "",
      }),
    /Unix socket and cannot use TLS/,
  );
});
