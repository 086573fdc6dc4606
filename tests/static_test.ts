import assert from "node:assert/strict";
import { request, scalwsYaml, startScalwsd } from "./_support/mod.ts";

/** A site on disk, removed when the test ends. */
interface Site extends AsyncDisposable {
  dir: string;
  root: string;
  big: Uint8Array;
}

async function site(): Promise<Site> {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-static-" });
  const root = `${dir}/www`;
  await Deno.mkdir(`${root}/docs`, { recursive: true });
  await Deno.mkdir(`${root}/empty`);
  await Deno.mkdir(`${dir}/outside`);
  await Deno.writeTextFile(`${root}/index.html`, "<h1>home</h1>");
  await Deno.writeTextFile(`${root}/docs/index.html`, "<h1>docs</h1>");
  await Deno.writeTextFile(`${root}/a.txt`, "hello world");
  await Deno.writeTextFile(`${root}/style.css`, "body{}");
  await Deno.writeTextFile(`${root}/empty.txt`, "");
  await Deno.writeTextFile(`${dir}/outside/secret.txt`, "secret");
  const big = new Uint8Array(200_000).map((_, i) => (i * 7) & 0xff);
  await Deno.writeFile(`${root}/big.bin`, big);
  await Deno.symlink(`${dir}/outside/secret.txt`, `${root}/escape.txt`);
  await Deno.symlink(`${dir}/outside`, `${root}/dirlink`);
  await Deno.symlink(`${root}/a.txt`, `${root}/alias.html`);
  return {
    dir,
    root,
    big,
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

/** Application site serving `root`, with an index under /docs. */
function config(root: string): string {
  return scalwsYaml({
    server: { admin: undefined },
    apps: [{
      name: "site",
      domains: ["site.test"],
      runtime: { type: "static", root },
      routes: [{ path: "/docs", runtime: { type: "static", root, index: "index.html" } }],
    }],
  });
}

Deno.test("static: GET and HEAD with length, type, ETag and Last-Modified; index and redirects", async () => {
  await using w = await site();
  await using s = await startScalwsd(config(w.root));
  const get = (path: string, headers: Record<string, string> = {}, method = "GET") =>
    request(s.url + path, { method, headers: { host: "site.test", ...headers } });
  const a = await get("/a.txt");
  assert.equal(a.status, 200);
  assert.equal(a.text, "hello world");
  assert.equal(a.headers.get("content-length"), "11");
  assert.equal(a.headers.get("content-type"), "text/plain; charset=utf-8");
  assert.equal(a.headers.get("accept-ranges"), "bytes");
  const mtime = (await Deno.stat(`${w.root}/a.txt`)).mtime!;
  assert.equal(a.headers.get("last-modified"), mtime.toUTCString());
  assert.match(a.headers.get("etag")!, /^"b-[0-9a-f]+"$/);

  const head = await get("/a.txt", {}, "HEAD");
  assert.deepEqual([head.status, head.text, head.headers.get("content-length")], [200, "", "11"]);
  assert.equal(head.headers.get("etag"), a.headers.get("etag"));

  assert.equal((await get("/style.css")).headers.get("content-type"), "text/css; charset=utf-8");
  const alias = await get("/alias.html");
  assert.deepEqual([alias.status, alias.text], [200, "hello world"]);
  assert.equal(
    alias.headers.get("content-type"),
    "text/html; charset=utf-8",
    "by the name asked for",
  );
  const empty = await get("/empty.txt");
  assert.deepEqual([empty.status, empty.text, empty.headers.get("content-length")], [
    200,
    "",
    "0",
  ]);

  const home = await get("/");
  assert.deepEqual([home.status, home.text], [200, "<h1>home</h1>"]);
  assert.equal(home.headers.get("content-type"), "text/html; charset=utf-8");
  const redirect = await get("/docs?x=1");
  assert.deepEqual([redirect.status, redirect.headers.get("location")], [301, "/docs/?x=1"]);
  assert.deepEqual([(await get("/docs/")).status, (await get("/docs/")).text], [
    200,
    "<h1>docs</h1>",
  ]);
  assert.deepEqual([(await get("/empty/")).status, (await get("/empty/")).text], [
    403,
    "Forbidden\n",
  ]);

  const big = await get("/big.bin");
  assert.equal(big.status, 200);
  assert.equal(big.headers.get("content-length"), "200000");
  assert.equal(big.headers.get("content-type"), "application/octet-stream");
  assert.deepEqual(big.bytes, w.big);

  const post = await request(s.url + "/a.txt", {
    method: "POST",
    headers: { host: "site.test" },
    body: "x",
  });
  assert.deepEqual([post.status, post.headers.get("allow")], [405, "GET, HEAD"]);
});

Deno.test("static: conditional requests answer 304 and 412", async () => {
  await using w = await site();
  await using s = await startScalwsd(config(w.root));
  const get = (path: string, headers: Record<string, string> = {}, method = "GET") =>
    request(s.url + path, { method, headers: { host: "site.test", ...headers } });
  const first = await get("/a.txt");
  const etag = first.headers.get("etag")!;
  const lm = first.headers.get("last-modified")!;
  const earlier = new Date(Date.parse(lm) - 60_000).toUTCString();
  const cases: [Record<string, string>, number][] = [
    [{ "if-none-match": etag }, 304],
    [{ "if-none-match": `W/${etag}` }, 304],
    [{ "if-none-match": `"other", ${etag}` }, 304],
    [{ "if-none-match": "*" }, 304],
    [{ "if-none-match": '"other"' }, 200],
    [{ "if-modified-since": lm }, 304],
    [{ "if-modified-since": earlier }, 200],
    [{ "if-none-match": '"other"', "if-modified-since": lm }, 200], // If-None-Match wins
    [{ "if-match": etag }, 200],
    [{ "if-match": '"other"' }, 412],
    [{ "if-match": `W/${etag}` }, 412], // strong comparison
    [{ "if-unmodified-since": lm }, 200],
    [{ "if-unmodified-since": earlier }, 412],
  ];
  for (const [headers, status] of cases) {
    const r = await get("/a.txt", headers);
    assert.equal(r.status, status, JSON.stringify(headers));
    if (status === 304) {
      assert.equal(r.text, "");
      assert.equal(r.headers.get("etag"), etag);
    }
  }
  assert.equal((await get("/a.txt", { "if-none-match": etag }, "HEAD")).status, 304);
});

Deno.test("static: byte ranges answer 206 and 416, If-Range falls back to the whole file", async () => {
  await using w = await site();
  await using s = await startScalwsd(config(w.root));
  const get = (path: string, headers: Record<string, string> = {}) =>
    request(s.url + path, { headers: { host: "site.test", ...headers } });
  const etag = (await get("/a.txt")).headers.get("etag")!;
  const cases: [string, number, string, string | null][] = [
    ["bytes=0-4", 206, "hello", "bytes 0-4/11"],
    ["bytes=6-", 206, "world", "bytes 6-10/11"],
    ["bytes=-5", 206, "world", "bytes 6-10/11"],
    ["bytes=4-4", 206, "o", "bytes 4-4/11"],
    ["bytes=0-1,3-4", 200, "hello world", null],
    ["bytes=20-", 416, "", "bytes */11"],
  ];
  for (const [range, status, body, cr] of cases) {
    const r = await get("/a.txt", { range });
    assert.deepEqual(
      [r.status, r.text, r.headers.get("content-range")],
      [status, body, cr],
      range,
    );
    if (status === 206) assert.equal(r.headers.get("content-length"), String(body.length));
  }
  assert.equal((await get("/a.txt", { range: "bytes=0-4", "if-range": etag })).status, 206);
  const stale = await get("/a.txt", { range: "bytes=0-4", "if-range": '"old"' });
  assert.deepEqual([stale.status, stale.text], [200, "hello world"]);

  const part = await get("/big.bin", { range: "bytes=100000-100009" });
  assert.equal(part.status, 206);
  assert.equal(part.headers.get("content-range"), "bytes 100000-100009/200000");
  assert.deepEqual(part.bytes, w.big.subarray(100000, 100010));
  const tail = await get("/big.bin", { range: "bytes=-70000" });
  assert.deepEqual(tail.bytes, w.big.subarray(130000));
  assert.equal((await get("/empty.txt", { range: "bytes=0-" })).status, 416);
});

Deno.test("static: nothing outside the root is served, symlinks and encodings included", async () => {
  await using w = await site();
  await using s = await startScalwsd(config(w.root));
  const get = (path: string) => request(s.url + path, { headers: { host: "site.test" } });
  for (
    const path of [
      "/missing.txt",
      "/escape.txt",
      "/dirlink/secret.txt",
      "/../outside/secret.txt",
      "/%2e%2e/outside/secret.txt",
      "/a/..%2f..%2foutside/secret.txt",
      "/..%2Foutside%2Fsecret.txt",
      "/a.txt%00.html",
      "/a.txt/x",
      // A file is no directory: nginx answers 404 too (relative links would break).
      "/a.txt/",
      "/docs/index.html/",
    ]
  ) {
    const r = await get(path);
    assert.equal(r.status, 404, path);
    assert.ok(!r.text.includes("secret"), path);
  }
  assert.equal((await get("/%zz")).status, 400);
  // Not a regular file: 403.
  {
    using _sock = Deno.listen({ transport: "unix", path: `${w.root}/app.sock` });
    assert.equal((await get("/app.sock")).status, 403);
  }
  if (Deno.uid() !== 0) {
    await Deno.chmod(`${w.root}/a.txt`, 0o000);
    assert.equal((await get("/a.txt")).status, 403);
  }
});
