import assert from "node:assert/strict";
import {
  app,
  disposableList,
  type Member,
  members,
  proxy,
  request,
  respond,
  scalwsYaml,
  sleep,
  startMember,
  startScalwsd,
} from "./_support/mod.ts";
import { RawConn } from "./_support/raw_conn.ts";

/** A member that reads the whole body and answers its length. */
function bodyMember(name: string): Member {
  return startMember(name, async (req) => {
    const len = req.body === null ? 0 : (await req.arrayBuffer()).byteLength;
    return new Response(`${name} got ${len}`);
  });
}

/** `server.limits` set to `limits`, pool p of `m` and `m2`, routes to each kind of runtime. */
function config(limits: Record<string, unknown>, m: Member, m2: Member = m): string {
  return scalwsYaml({
    server: { admin: undefined, max_body: "1KiB", limits },
    upstreams: { p: { members: members(...new Set([m.address, m2.address])), retries: 1 } },
    apps: [app(respond("ok"), {
      routes: [
        { path: "/small", runtime: respond("small"), max_body: 16 },
        { path: "/static", runtime: { type: "static", root: "{{dir}}" } },
        { path: "/direct", runtime: { type: "proxy", upstream: `http://${m.address}` } },
        { path: "/pool", runtime: proxy("p") },
      ],
    })],
  });
}

function portOf(url: string): number {
  return Number(new URL(url).port);
}

Deno.test("limits: URI length (414) and header count and size (431), past the front's own limits too", async () => {
  await using m = bodyMember("m");
  await using s = await startScalwsd(
    config({ max_uri_length: 64, max_header_count: 10, max_header_size: "1KiB" }, m),
  );
  const get = (path: string, headers: Record<string, string> = {}) =>
    request(s.url + path, { headers: { host: "a.test", ...headers } });
  assert.equal((await get("/" + "a".repeat(55) + "?q=12345")).status, 200, "64 bytes");
  const long = await get("/" + "a".repeat(56) + "?q=12345");
  assert.deepEqual([long.status, long.text], [414, "URI Too Long\n"]);

  // host and connection come with every request: 8 more make 10.
  const eight: Record<string, string> = {};
  for (let i = 0; i < 8; i++) eight[`x-h${i}`] = "v";
  assert.equal((await get("/", eight)).status, 200);
  const many = await get("/", { ...eight, "x-one-more": "v" });
  assert.deepEqual([many.status, many.text], [431, "Request Header Fields Too Large\n"]);
  const big = await get("/", { "x-big": "v".repeat(1000) });
  assert.equal(big.status, 431);
  assert.equal((await get("/", { "x-big": "v".repeat(900) })).status, 200);

  // A repeated name counts once (as Deno.serve's Headers count them): 12 Cookie lines pass.
  const c = await RawConn.open(portOf(s.url));
  try {
    await c.write(
      "GET / HTTP/1.1\r\nHost: a.test\r\n" + "Cookie: k=v\r\n".repeat(12) + "\r\n",
    );
    assert.equal((await c.response())?.status, 200);
  } finally {
    await c.close();
  }

  // Over what the front reads at all (128 field lines, 64 KiB of head): 431, or 414 for the
  // request line; the connection closes.
  const hundreds: Record<string, string> = {};
  for (let i = 0; i < 200; i++) hundreds[`x-h${i}`] = "v";
  const over = await get("/", hundreds);
  assert.deepEqual([over.status, over.text], [431, "Request Header Fields Too Large\n"]);
  assert.equal((await get("/", { "x-big": "v".repeat(70_000) })).status, 431);
  assert.equal((await get("/" + "a".repeat(70_000))).status, 414);
});

Deno.test("limits: with the defaults, 129 header fields or 64 KiB of them get 431, a 70 KiB target 414", async () => {
  await using m = bodyMember("m");
  await using s = await startScalwsd(config({}, m));
  const get = (path: string, headers: Record<string, string> = {}) =>
    request(s.url + path, { headers: { host: "a.test", ...headers } });
  const fields = (n: number) => {
    const h: Record<string, string> = {};
    for (let i = 0; i < n; i++) h[`x-h${i}`] = "v";
    return h;
  };
  // host and connection come with every request.
  assert.equal((await get("/", fields(126))).status, 200);
  assert.equal((await get("/", fields(127))).status, 431);
  assert.equal((await get("/", { "x-big": "v".repeat(60_000) })).status, 200);
  assert.equal((await get("/", { "x-big": "v".repeat(66_000) })).status, 431);
  assert.equal((await get("/" + "a".repeat(8000))).status, 200);
  assert.equal((await get("/" + "a".repeat(9000))).status, 414);
  assert.equal((await get("/" + "a".repeat(70_000))).status, 414);
});

Deno.test("limits: header_read_timeout closes a connection without a request head in time", async () => {
  await using m = bodyMember("m");
  await using s = await startScalwsd(
    config({ header_read_timeout: "300ms", idle_timeout: "10s" }, m),
  );
  const port = portOf(s.url);
  await using conns = disposableList<RawConn>();
  const start = performance.now();
  const silent = await RawConn.open(port);
  const partial = await RawConn.open(port);
  conns.push(silent, partial);
  await partial.write("GET / HTTP/1.1\r\nhost: a.test\r\n");
  for (const c of [silent, partial]) {
    assert.ok((await c.closedWithin(3000)) >= 0);
    const ms = performance.now() - start;
    assert.ok(ms >= 250 && ms < 2000, `closed after ${ms} ms`);
  }
  // A head that arrives in time is answered, and the connection then gets idle_timeout.
  const prompt = await RawConn.open(port);
  conns.push(prompt);
  await prompt.write("GET / HTTP/1.1\r\nhost: a.test\r\n\r\n");
  assert.equal((await prompt.response())?.status, 200);
  assert.equal(await prompt.closedWithin(600), -1);
});

Deno.test("limits: idle_timeout closes a kept-alive connection, not a busy one", async () => {
  await using slow = startMember("slow", async () => {
    await sleep(600);
    return new Response("slow");
  });
  await using s = await startScalwsd(
    config({ header_read_timeout: "10s", idle_timeout: "300ms" }, slow),
  );
  const port = portOf(s.url);
  await using conns = disposableList<RawConn>();
  const c = await RawConn.open(port);
  conns.push(c);
  // Requests every 150 ms keep it open past the timeout...
  for (let i = 0; i < 5; i++) {
    await c.write("GET / HTTP/1.1\r\nhost: a.test\r\n\r\n");
    assert.equal((await c.response())?.body, "ok");
    await sleep(150);
  }
  // ...a request in flight longer than the timeout is not cut...
  await c.write("GET /direct HTTP/1.1\r\nhost: a.test\r\n\r\n");
  assert.equal((await c.response())?.body, "slow");
  // ...and an idle one closes.
  const ms = await c.closedWithin(3000);
  assert.ok(ms >= 200 && ms < 2000, `closed after ${ms} ms`);
});

Deno.test("limits: Content-Length over max_body is 413 before the body is read, on every handler", async () => {
  await using m = bodyMember("m");
  await using s = await startScalwsd(config({}, m));
  const port = portOf(s.url);
  const cases: [string, number, number][] = [
    ["/", 1025, 413],
    ["/", 1024, 200],
    ["/small", 17, 413],
    ["/small", 16, 200],
    ["/static/x.txt", 2000, 413],
    ["/direct", 1025, 413],
    ["/pool", 5000, 413],
  ];
  await Promise.all(cases.map(async ([path, length, status]) => {
    await using c = await RawConn.open(port);
    // Only the head: a 413 must not wait for the body.
    await c.write(`POST ${path} HTTP/1.1\r\nhost: a.test\r\ncontent-length: ${length}\r\n\r\n`);
    if (status === 200) await c.write("x".repeat(length));
    const r = await c.response(2000);
    assert.equal(r?.status, status, `${path} ${length}`);
    if (status === 413) {
      assert.match(r!.head, /\r\nconnection: close/i);
      assert.ok((await c.closedWithin(2000)) >= 0, "closed");
    }
  }));
  assert.equal(m.count, 0, "the member never saw the refused requests");
});

Deno.test("limits: a chunked body over max_body is cut with 413 and the connection closes", async () => {
  await using m = bodyMember("m");
  await using s = await startScalwsd(config({}, m));
  const port = portOf(s.url);
  await Promise.all(["/direct", "/pool"].map(async (path) => {
    await using c = await RawConn.open(port);
    await c.write(
      `POST ${path} HTTP/1.1\r\nhost: a.test\r\ntransfer-encoding: chunked\r\n\r\n` +
        `258\r\n${"a".repeat(600)}\r\n`,
    );
    await sleep(50);
    await c.write(`258\r\n${"b".repeat(600)}\r\n`);
    const r = await c.response(3000);
    assert.deepEqual([r?.status, r?.body], [413, "Content Too Large\n"], path);
    assert.match(r!.head, /\r\nconnection: close/i);
    assert.ok((await c.closedWithin(2000)) >= 0, `${path} closed`);
  }));
  // Within the limit it streams through.
  const ok = await request(s.url + "/direct", {
    method: "POST",
    headers: { host: "a.test", "transfer-encoding": "chunked" },
    body: `3e8\r\n${"c".repeat(1000)}\r\n0\r\n\r\n`,
  });
  assert.deepEqual([ok.status, ok.text], [200, "m got 1000"]);
});

Deno.test("limits: a body chunk later than body_read_timeout is 408 and the connection closes", async () => {
  await using m = bodyMember("m");
  await using m2 = bodyMember("m2");
  await using s = await startScalwsd(config({ body_read_timeout: "300ms" }, m, m2));
  const port = portOf(s.url);
  // /direct streams the body; /pool (two members, retries) reads a small one into memory.
  await Promise.all(["/direct", "/pool"].map(async (path) => {
    await using c = await RawConn.open(port);
    const start = performance.now();
    await c.write(
      `POST ${path} HTTP/1.1\r\nhost: a.test\r\ncontent-length: 100\r\n\r\n0123456789`,
    );
    const r = await c.response(3000);
    const ms = performance.now() - start;
    assert.deepEqual([r?.status, r?.body], [408, "Request Timeout\n"], path);
    assert.ok(ms >= 250 && ms < 2000, `${path}: 408 after ${ms} ms`);
    assert.match(r!.head, /\r\nconnection: close/i);
    assert.ok((await c.closedWithin(2000)) >= 0, `${path} closed`);
  }));
  // Chunks that keep coming in time are fine, however long the whole upload takes.
  await Promise.all(["/direct", "/pool"].map(async (path) => {
    await using c = await RawConn.open(port);
    await c.write(`POST ${path} HTTP/1.1\r\nhost: a.test\r\ncontent-length: 50\r\n\r\n`);
    for (let i = 0; i < 5; i++) {
      await sleep(150);
      await c.write("0123456789");
    }
    const r = await c.response(3000);
    assert.equal(r?.status, 200, path);
    assert.match(r!.body, /^m2? got 50$/);
  }));
});

Deno.test("limits: max_connections makes further connections wait for a free slot", async () => {
  await using m = bodyMember("m");
  await using s = await startScalwsd(config({ max_connections: 2 }, m));
  const port = portOf(s.url);
  await using conns = disposableList<RawConn>();
  for (let i = 0; i < 2; i++) {
    const c = await RawConn.open(port);
    conns.push(c);
    await c.write("GET / HTTP/1.1\r\nhost: a.test\r\n\r\n");
    assert.equal((await c.response())?.status, 200);
  }
  const third = await RawConn.open(port);
  conns.push(third);
  await third.write("GET / HTTP/1.1\r\nhost: a.test\r\n\r\n");
  assert.equal(await third.response(400), null, "waits in the backlog");
  await conns[0].close();
  assert.equal((await third.response(2000))?.status, 200);
});
