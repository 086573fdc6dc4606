/**
 * Interim answers (RFC 9110 15.2): a member's `102 Processing` and `103 Early Hints` go on to an
 * HTTP/1.1 client before the final answer, with their fields, and are never stored: a hit
 * carries none. HTTP/1.0 clients get none. (Deno.serve, the HTTP/2 front, cannot send them.)
 */
import assert from "node:assert/strict";
import { cachedApp, rawServer, readHead, startScalwsd } from "./_support/mod.ts";

const enc = new TextEncoder();

/** Reads `conn` until `text` holds a head and `len` body bytes after it (or the end). */
async function readAnswer(conn: Deno.Conn, until: (text: string) => boolean): Promise<string> {
  const buf = new Uint8Array(65536);
  let text = "";
  const end = Date.now() + 5_000;
  while (!until(text) && Date.now() < end) {
    const n = await conn.read(buf);
    if (n === null) break;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  return text;
}

Deno.test("interim 102 and 103 reach an HTTP/1.1 client before the answer, and are never stored", async () => {
  let requests = 0;
  await using member = rawServer(async (conn) => {
    for (;;) {
      const head = await readHead(conn);
      if (head === "") return;
      requests++;
      await conn.write(enc.encode(
        "HTTP/1.1 102 Processing\r\n\r\n" +
          "HTTP/1.1 103 Early Hints\r\nlink: </s.css>; rel=preload; as=style\r\nx-my-header: test\r\n\r\n",
      ));
      await new Promise((r) => setTimeout(r, 20));
      await conn.write(enc.encode(
        "HTTP/1.1 200 OK\r\ncache-control: max-age=600\r\ncontent-length: 2\r\n\r\nok",
      ));
    }
  });
  await using s = await startScalwsd(cachedApp(member));
  const port = Number(new URL(s.url).port);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(enc.encode("GET /i HTTP/1.1\r\nhost: a.test\r\n\r\n"));
    const first = await readAnswer(conn, (t) => t.includes("\r\n\r\nok"));
    const heads = first.split("\r\n\r\n");
    assert.equal(heads[0], "HTTP/1.1 102 Processing");
    assert.equal(
      heads[1],
      "HTTP/1.1 103 Early Hints\r\nlink: </s.css>; rel=preload; as=style\r\nx-my-header: test",
    );
    assert.match(heads[2], /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(heads[2], /\r\ncache-status: scalwsd; fwd=uri-miss; fwd-status=200; stored/);
    // The hit: the stored final answer alone.
    await conn.write(enc.encode("GET /i HTTP/1.1\r\nhost: a.test\r\n\r\n"));
    const hit = await readAnswer(conn, (t) => t.includes("\r\n\r\nok"));
    assert.match(hit, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(hit, /\r\ncache-status: scalwsd; hit/);
    assert.equal(requests, 1);
  } finally {
    conn.close();
  }
  // HTTP/1.0 has no interim answers.
  const old = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await old.write(enc.encode("GET /j HTTP/1.0\r\nhost: a.test\r\n\r\n"));
    const text = await readAnswer(old, (t) => t.includes("\r\n\r\nok"));
    assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.doesNotMatch(text, /HTTP\/1\.1 10[23]/);
  } finally {
    old.close();
  }
});
