import assert from "node:assert/strict";
import { app, scalwsYaml, startMember, startPki, startScalwsd, tempDir } from "./_support/mod.ts";
import { httpsListener } from "./_support/yaml.ts";
import { curl, h2Session } from "./_support/tls_client.ts";
import {
  END_HEADERS,
  END_STREAM,
  frame,
  H2Raw,
  headerBlock,
  HEADERS,
  request,
} from "./_support/h2_raw.ts";

Deno.test("HTTP/2 from clients works through the proxy and static files", async () => {
  await using pki = await startPki();
  const cert = await pki.issue("a", ["a.test"]);
  await using rootDir = await tempDir("scalwsd-h2-");
  const root = rootDir.path;
  const file = new Uint8Array(100_000).map((_, i) => (i * 13) & 0xff);
  await Deno.writeFile(`${root}/data.bin`, file);
  await Deno.mkdir(`${root}/static`);
  await Deno.writeTextFile(`${root}/static/hello.txt`, "hello over h2");
  await using member = startMember("m", async (req) => {
    const len = req.body === null ? 0 : (await req.arrayBuffer()).byteLength;
    return new Response(
      JSON.stringify({
        method: req.method,
        url: new URL(req.url).pathname + new URL(req.url).search,
        host: req.headers.get("host"),
        xfh: req.headers.get("x-forwarded-host"),
        xfp: req.headers.get("x-forwarded-proto"),
        len,
      }),
      { headers: { "content-type": "application/json" } },
    );
  });
  await using s = await startScalwsd(scalwsYaml({
    server: {
      listeners: [httpsListener(cert)],
      admin: undefined,
    },
    apps: [app({ type: "proxy", upstream: `http://${member.address}` }, {
      routes: [
        { path: "/static", runtime: { type: "static", root } },
        {
          path: "/keep",
          runtime: { type: "proxy", upstream: `http://${member.address}`, preserve_host: true },
        },
      ],
    })],
  }));
  const port = s.server.bound.get("https")!.port;
  const ca = pki.caFile;
  const get = await curl(port, ca, "a.test", "/api/x?y=1", ["--http2"]);
  assert.deepEqual([get.version, get.status], ["2", 200]);
  assert.deepEqual(JSON.parse(get.body), {
    method: "GET",
    url: "/api/x?y=1",
    host: member.address,
    xfh: `a.test:${port}`,
    xfp: "https",
    len: 0,
  });
  const kept = JSON.parse((await curl(port, ca, "a.test", "/keep", ["--http2"])).body);
  assert.equal(kept.host, `a.test:${port}`, "the Host comes from the :authority under h2");

  const upload = `${root}/data.bin`;
  const post = await curl(port, ca, "a.test", "/up", ["--http2", "--data-binary", `@${upload}`]);
  assert.deepEqual([post.version, post.status, JSON.parse(post.body).len], ["2", 200, 100_000]);

  const hello = await curl(port, ca, "a.test", "/static/hello.txt", ["--http2"]);
  assert.deepEqual([hello.version, hello.status, hello.body], ["2", 200, "hello over h2"]);
  const part = await curl(port, ca, "a.test", "/static/hello.txt", ["--http2", "-r", "6-9"]);
  assert.deepEqual([part.status, part.body], [206, "over"]);
  assert.match(part.headers, /\ncontent-range: bytes 6-9\/13/);

  // Many concurrent streams on one connection.
  const session = h2Session(port, pki.ca);
  try {
    const bodies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        new Promise<string>((resolve, reject) => {
          const req = session.request({ ":path": `/stream/${i}` });
          let text = "";
          req.setEncoding("utf8");
          req.on("data", (d: string) => (text += d));
          req.on("end", () => resolve(text));
          req.on("error", reject);
          req.end();
        })),
    );
    assert.deepEqual(
      bodies.map((b) => JSON.parse(b).url),
      Array.from({ length: 20 }, (_, i) => `/stream/${i}`),
    );
  } finally {
    await new Promise<void>((r) => session.close(() => r()));
  }
});

Deno.test("HTTP/2: the host is :authority; a Host field naming another is 400, one alone is used", async () => {
  await using pki = await startPki();
  const cert = await pki.issue("a", ["a.test", "b.test"]);
  await using s = await startScalwsd(scalwsYaml({
    server: { listeners: [httpsListener(cert)], admin: undefined },
    apps: [
      app({ type: "respond", body: "app a" }),
      app({ type: "respond", body: "app b" }, { name: "b", domains: ["b.test"] }),
    ],
  }));
  const port = s.server.bound.get("https")!.port;
  await using h2 = await H2Raw.connect({ port, ca: pki.ca, servername: "a.test" });
  const cases: [[string, string][], number, string][] = [
    [
      [[":authority", "a.test"], ["host", "b.test"]],
      400,
      "Bad Request: Host header differs from :authority\n",
    ],
    [[[":authority", "a.test"], ["host", "A.TEST:443"]], 200, "app a"],
    [[["host", "b.test"]], 200, "app b"],
    [[[":authority", "b.test"]], 200, "app b"],
  ];
  let id = 1;
  for (const [fields, status, body] of cases) {
    const block = headerBlock([
      [":method", "GET"],
      [":scheme", "https"],
      [":path", "/"],
      ...fields,
    ]);
    await h2.send(frame(HEADERS, END_HEADERS | END_STREAM, id, block));
    assert.ok(await h2.until(() => h2.stream(id).ended || h2.closed, 3000));
    assert.deepEqual(
      [h2.stream(id).status, h2.stream(id).body],
      [status, body],
      JSON.stringify(fields),
    );
    id += 2;
  }
});

Deno.test("HTTP/2 on a relayed listener: a request with neither :authority nor Host is 400", async () => {
  await using pki = await startPki();
  const a = await pki.issue("a", ["a.test"]);
  const b = await pki.issue("b", ["b.test"]);
  await using s = await startScalwsd(scalwsYaml({
    // Two certificates: relayed wherever scalwsd runs. localhost is a domain, strict SNI off, so
    // the name Deno makes up (localhost:PORT) was routed.
    server: {
      listeners: [{
        ...httpsListener([a, b]),
        tls: { ...httpsListener([a, b]).tls, strict_sni: false },
      }],
      admin: undefined,
    },
    apps: [app({ type: "respond", body: "app a" }, { domains: ["a.test", "localhost"] })],
  }));
  const port = s.server.bound.get("https")!.port;
  await using h2 = await H2Raw.connect({ port, ca: pki.ca, servername: "a.test" });
  const block = headerBlock([[":method", "GET"], [":scheme", "https"], [":path", "/"]]);
  await h2.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, block));
  assert.ok(await h2.until(() => h2.stream(1).ended || h2.closed, 3000));
  assert.deepEqual([h2.stream(1).status, h2.stream(1).body], [
    400,
    "Bad Request: missing Host header\n",
  ]);
  await h2.send(request(3, "localhost", "/"));
  assert.ok(await h2.until(() => h2.stream(3).ended || h2.closed, 3000));
  assert.deepEqual([h2.stream(3).status, h2.stream(3).body], [200, "app a"]);
});
