/**
 * scalwsd's own HTTP/1.1 front, end to end: pipelined requests through the proxy in order,
 * member bodies re-framed (Content-Length, chunked, up to the close), a member's status outside
 * 100-599 answered with 502.
 */
import assert from "node:assert/strict";
import { rawServer, readHead, startScalwsd } from "./_support/mod.ts";
import { RawConn } from "./_support/raw_conn.ts";

const enc = new TextEncoder();

/** A raw member answering each request head with the bytes `answer(target)` gives. */
function scripted(answer: (target: string) => string) {
  return rawServer(async (conn) => {
    for (;;) {
      const head = await readHead(conn);
      if (head === "") return;
      const target = head.split(" ")[1];
      await conn.write(enc.encode(answer(target)));
      if (target.startsWith("/close")) return conn.close();
    }
  });
}

const config = (member: string) => `
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
tenants:
  - name: t
    applications:
      - name: a
        domains: [a.test]
        runtime: {type: proxy, upstream: "http://${member}"}
`;

Deno.test("front: pipelined requests through the proxy, bodies re-framed, 999 becomes 502", async () => {
  await using member = scripted((target) => {
    if (target === "/odd") return "HTTP/1.1 999 Odd\r\ncontent-length: 2\r\n\r\nno";
    if (target === "/chunked") {
      return "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
    }
    if (target.startsWith("/close")) return "HTTP/1.1 200 OK\r\n\r\nuntil the close";
    return `HTTP/1.1 200 OK\r\ncontent-length: ${target.length}\r\n\r\n${target}`;
  });
  await using s = await startScalwsd(config(member.address));
  const c = await RawConn.open(Number(new URL(s.url).port));
  try {
    await c.write(
      "GET /one HTTP/1.1\r\nHost: a.test\r\n\r\nGET /odd HTTP/1.1\r\nHost: a.test\r\n\r\n" +
        "GET /two HTTP/1.1\r\nHost: a.test\r\n\r\n",
    );
    const got = [await c.response(), await c.response(), await c.response()];
    assert.deepEqual(got.map((r) => [r?.status, r?.body]), [
      [200, "/one"],
      [502, "Bad Gateway\n"],
      [200, "/two"],
    ]);
    // A chunked member body is sent whole with its length (it arrived in one read), a
    // close-delimited one goes chunked to an HTTP/1.1 client.
    await c.write("GET /chunked HTTP/1.1\r\nHost: a.test\r\n\r\n");
    assert.equal((await c.response())?.body, "abcde");
  } finally {
    await c.close();
  }
  const d = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(s.url).port) });
  try {
    await d.write(enc.encode("GET /close HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n"));
    let text = "";
    const buf = new Uint8Array(4096);
    for (let n = await d.read(buf); n !== null; n = await d.read(buf)) {
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(text, /\r\ntransfer-encoding: chunked\r\n/i);
    assert.match(text, /\r\n\r\nf\r\nuntil the close\r\n0\r\n\r\n$/);
  } finally {
    d.close();
  }
});

Deno.test("front: a member's HEAD answer without a length reaches the client without one", async () => {
  // A HEAD answer's Content-Length is the GET body's size: 0 would be a false one.
  await using member = scripted((target) =>
    target === "/sized"
      ? "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 42\r\n\r\n"
      : "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\n"
  );
  await using s = await startScalwsd(config(member.address));
  const d = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(s.url).port) });
  try {
    await d.write(
      enc.encode(
        "HEAD /unsized HTTP/1.1\r\nHost: a.test\r\n\r\n" +
          "HEAD /sized HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n",
      ),
    );
    let text = "";
    const buf = new Uint8Array(4096);
    for (let n = await d.read(buf); n !== null; n = await d.read(buf)) {
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    const heads = text.split("\r\n\r\n").filter((h) => h !== "");
    assert.equal(heads.length, 2, text);
    assert.match(heads[0], /^HTTP\/1\.1 200 OK\r\n/);
    assert.doesNotMatch(heads[0], /content-length|transfer-encoding|connection: close/i);
    assert.match(heads[1], /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(heads[1], /\r\ncontent-length: 42\r\n/);
  } finally {
    d.close();
  }
});

Deno.test("front: a fragment in the target is dropped; deny_paths and routes see the path before it", async () => {
  const seen: string[] = [];
  await using member = scripted((target) => {
    seen.push(target);
    return "HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nmember";
  });
  await using s = await startScalwsd(`
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
  deny_paths: [/.git]
tenants:
  - name: t
    applications:
      - name: a
        domains: [a.test]
        runtime: {type: proxy, upstream: "http://${member.address}"}
        routes:
          - {path: /admin, runtime: {type: respond, status: 403, body: "no"}}
`);
  const c = await RawConn.open(Number(new URL(s.url).port));
  try {
    const get = async (target: string) => {
      await c.write(`GET ${target} HTTP/1.1\r\nHost: a.test\r\n\r\n`);
      const r = await c.response();
      return [r?.status, r?.body];
    };
    assert.deepEqual(await get("/.git#x"), [404, "Not Found\n"]);
    assert.deepEqual(await get("/.git/config#"), [404, "Not Found\n"]);
    assert.deepEqual(await get("/admin#"), [403, "no"]);
    assert.deepEqual(await get("/page?q=1#top"), [200, "member"]);
  } finally {
    await c.close();
  }
  assert.deepEqual(seen, ["/page?q=1"]);
});

Deno.test("front: a refused head gets 400 naming what was wrong, and the connection closes", async () => {
  await using member = scripted(() => "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
  await using s = await startScalwsd(config(member.address));
  const port = Number(new URL(s.url).port);
  const cases: [string, string][] = [
    ["X-A: a\r\n b\r\n", "obsolete line folding"],
    [
      "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n",
      "Content-Length with Transfer-Encoding",
    ],
    ["Content-Length: 3\r\nContent-Length: 4\r\n", "different Content-Lengths"],
    ["Host: b.test\r\n", "two Host fields"],
    ["Transfer-Encoding: gzip\r\n", "Transfer-Encoding other than chunked"],
    ["Connection: Upgrade\r\nUpgrade: h2c\r\n", "h2c upgrade refused"],
  ];
  for (const [fields, reason] of cases) {
    const d = await Deno.connect({ hostname: "127.0.0.1", port });
    try {
      await d.write(enc.encode(`POST / HTTP/1.1\r\nHost: a.test\r\n${fields}\r\nabc`));
      let text = "";
      const buf = new Uint8Array(4096);
      for (let n = await d.read(buf); n !== null; n = await d.read(buf)) {
        text += new TextDecoder().decode(buf.subarray(0, n));
      }
      const body = `Bad Request: ${reason}\n`;
      assert.equal(
        text,
        "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\n" +
          `content-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
        reason,
      );
    } finally {
      d.close();
    }
  }
});
