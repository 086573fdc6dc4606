import assert from "node:assert/strict";
import zlib from "node:zlib";
import { request, startMember, startScalwsd, tempDir, waitUntil } from "./_support/mod.ts";
import { HOST, oneApp } from "./_support/policies.ts";

const TEXT = "scalwsd compresses text. ".repeat(400); // 10 KB

Deno.test("compress: gzip and brotli by q-value, Vary, and every case it must leave alone", async () => {
  await using m = startMember("m", (req) => {
    const p = new URL(req.url).pathname;
    const h = (extra: Record<string, string> = {}) => ({
      "content-type": "text/html; charset=utf-8",
      ...extra,
    });
    switch (p) {
      case "/small":
        return new Response("tiny", { headers: h() });
      case "/png":
        return new Response(TEXT, { headers: { "content-type": "image/png" } });
      case "/encoded":
        return new Response(TEXT, { headers: h({ "content-encoding": "identity" }) });
      case "/no-transform":
        return new Response(TEXT, { headers: h({ "cache-control": "public, no-transform" }) });
      case "/partial":
        return new Response(TEXT.slice(0, 2000), {
          status: 206,
          headers: h({ "content-range": `bytes 0-1999/${TEXT.length}` }),
        });
      case "/stream": {
        let i = 0;
        const body = new ReadableStream<Uint8Array>({
          pull(c) {
            if (i++ === 20) return c.close();
            c.enqueue(new TextEncoder().encode(TEXT));
          },
        });
        return new Response(body, { headers: h({ etag: '"v1"' }) });
      }
      default:
        return new Response(TEXT, { headers: h() });
    }
  });
  await using s = await startScalwsd(oneApp(
    `{type: proxy, upstream: "http://${m.address}"}`,
    `        policies: [{compress: {level: 5}}]`,
  ));
  const get = (path: string, ae?: string, method = "GET") =>
    request(`${s.url}${path}`, {
      method,
      headers: ae === undefined ? HOST : { ...HOST, "accept-encoding": ae },
    });

  const br = await get("/", "gzip;q=0.5, br");
  assert.equal(br.status, 200);
  assert.equal(br.headers.get("content-encoding"), "br");
  assert.equal(br.headers.get("vary"), "Accept-Encoding");
  assert.equal(new TextDecoder().decode(zlib.brotliDecompressSync(br.bytes)), TEXT);
  assert.ok(br.bytes.length < TEXT.length / 10);

  const gz = await get("/", "br;q=0.1, gzip");
  assert.equal(gz.headers.get("content-encoding"), "gzip");
  assert.equal(new TextDecoder().decode(zlib.gunzipSync(gz.bytes)), TEXT);

  const tie = await get("/", "gzip, br"); // equal q: the configured order (br first)
  assert.equal(tie.headers.get("content-encoding"), "br");
  const star = await get("/", "*;q=0.3, br;q=0");
  assert.equal(star.headers.get("content-encoding"), "gzip");

  const VARY = "Accept-Encoding";
  for (
    const [path, ae, method, vary] of [
      ["/", undefined, "GET", VARY],
      ["/", "identity", "GET", VARY],
      ["/", "gzip;q=0, br;q=0", "GET", VARY],
      ["/", "gzip", "HEAD", VARY],
      ["/small", "gzip", "GET", VARY],
      ["/no-transform", "gzip", "GET", null],
      ["/partial", "gzip", "GET", null],
    ] as const
  ) {
    const r = await get(path, ae, method);
    assert.equal(r.headers.get("content-encoding"), null, `${method} ${path} ${ae}`);
    assert.equal(r.headers.get("vary"), vary, `${method} ${path} ${ae}`);
  }
  const png = await get("/png", "gzip");
  assert.equal(png.headers.get("content-encoding"), null);
  assert.equal(png.headers.get("vary"), null);
  const encoded = await get("/encoded", "gzip");
  assert.equal(encoded.headers.get("content-encoding"), "identity");

  const streamed = await get("/stream", "gzip");
  assert.equal(streamed.headers.get("content-encoding"), "gzip");
  assert.equal(streamed.headers.get("etag"), 'W/"v1"');
  assert.equal(new TextDecoder().decode(zlib.gunzipSync(streamed.bytes)), TEXT.repeat(20));
});

Deno.test("compress: the access log's bytes are the compressed body's, whole or streamed", async () => {
  await using m = startMember("m", (req) => {
    const p = new URL(req.url).pathname;
    const headers = { "content-type": "text/html; charset=utf-8" };
    if (p === "/stream") {
      let i = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(c) {
          if (i++ === 20) return c.close();
          c.enqueue(new TextEncoder().encode(TEXT));
        },
      });
      return new Response(body, { headers });
    }
    return new Response(TEXT, { status: p === "/missing" ? 404 : 200, headers });
  });
  await using dir = await tempDir();
  const page = "<h1>not here</h1>\n";
  await Deno.writeTextFile(`${dir.path}/404.html`, page);
  const logFile = `${dir.path}/access.log`;
  {
    await using s = await startScalwsd(
      oneApp(
        `{type: proxy, upstream: "http://${m.address}"}`,
        // error_pages first: on the way out it replaces the compressed body of a member's 404.
        `        policies: [{error_pages: {404: ${dir.path}/404.html, intercept: true}}, {compress: {}}]`,
      ),
      { accessLog: logFile },
    );
    const get = (path: string, ae: string) =>
      request(`${s.url}${path}`, { headers: { ...HOST, "accept-encoding": ae } });
    const whole = await get("/whole", "gzip");
    assert.equal(whole.headers.get("content-encoding"), "gzip");
    const streamed = await get("/stream", "br");
    assert.equal(streamed.headers.get("content-encoding"), "br");
    const plain = await get("/plain", "identity");
    assert.equal(plain.headers.get("content-encoding"), null);
    assert.equal(plain.bytes.length, TEXT.length);
    const missing = await get("/missing", "gzip");
    assert.equal(missing.text, page);
    const sizes = [whole.bytes.length, streamed.bytes.length, TEXT.length, page.length];
    assert.ok(sizes[0] < TEXT.length / 10 && sizes[1] < TEXT.length, String(sizes));
    const logged = await waitUntil(async () => {
      const text = await Deno.readTextFile(logFile).catch(() => "");
      const lines = text.trim().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
      return lines.length === 4 ? lines : null;
    }, { what: "four access log lines" });
    assert.deepEqual(logged.map((l) => [l.path, l.bytes]), [
      ["/whole", sizes[0]],
      ["/stream", sizes[1]],
      ["/plain", sizes[2]],
      ["/missing", sizes[3]],
    ]);
  }
});
