import assert from "node:assert/strict";
import http2 from "node:http2";
import tls from "node:tls";
import {
  app,
  respond,
  scalwsYaml,
  sleep,
  startPki,
  startScalwsd,
  type TestPki,
  waitUntil,
} from "./_support/mod.ts";
import { curl, fingerprint, h2Session, presented, TlsClient } from "./_support/tls_client.ts";

/** A CA and two certificates (a.test with a wildcard, b.test), removed when the test ends. */
interface Certs {
  pki: TestPki;
  a: { cert: string; key: string };
  b: { cert: string; key: string };
}

async function certs(): Promise<Certs & AsyncDisposable> {
  const pki = await startPki();
  return {
    pki,
    a: await pki.issue("a", ["a.test", "*.a.test"]),
    b: await pki.issue("b", ["b.test"]),
    [Symbol.asyncDispose]: () => pki.close(),
  };
}

/** A TLS listener with both certificates (`tls` adds keys), applications a and b. */
function config(
  c: Certs,
  tls: Record<string, unknown> = {},
  server: Record<string, unknown> = {},
): string {
  return scalwsYaml({
    server: {
      listeners: [{
        name: "https",
        address: "127.0.0.1:0",
        tls: { certificates: [c.a, c.b].map(({ cert, key }) => ({ cert, key })), ...tls },
      }],
      ...server,
    },
    apps: [
      app(respond("app a"), { domains: ["a.test", "*.a.test", "other.test"] }),
      app(respond("app b"), { name: "b", domains: ["b.test"] }),
    ],
  });
}

/** The ClientHello a Deno TLS client sends for `name` (caught by a listener that answers nothing). */
async function clientHello(name: string): Promise<Uint8Array> {
  using catcher = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const tcp = await Deno.connect({ hostname: "127.0.0.1", port: catcher.addr.port });
  const client = Deno.startTls(tcp, { hostname: name }).then((t) => t.handshake().then(() => t))
    .catch(() => null);
  const conn = await catcher.accept();
  const buf = new Uint8Array(4096);
  const n = await conn.read(buf);
  conn.close();
  (await client)?.close();
  return buf.slice(0, n ?? 0);
}

/** An HTTP/2 GET on an open session; `authority` overrides the session's. */
function h2get(session: http2.ClientHttp2Session, path: string, authority?: string) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const headers: http2.OutgoingHttpHeaders = { ":path": path };
    if (authority !== undefined) headers[":authority"] = authority;
    const req = session.request(headers);
    let status = 0;
    let body = "";
    req.setEncoding("utf8");
    req.on("response", (h) => (status = Number(h[":status"])));
    req.on("data", (d: string) => (body += d));
    req.on("end", () => resolve({ status, body }));
    req.on("error", reject);
    req.end();
  });
}

Deno.test("a TLS listener chooses the certificate by SNI and serves HTTP/2 and HTTP/1.1", async () => {
  await using c = await certs();
  await using s = await startScalwsd(config(c));
  const port = s.server.bound.get("https")!.port;
  const ca = c.pki.caFile;
  const fa = await fingerprint(c.a.cert);
  const fb = await fingerprint(c.b.cert);
  assert.equal(await presented(port, c.pki.ca, "a.test"), fa);
  assert.equal(await presented(port, c.pki.ca, "x.a.test"), fa, "single-label wildcard");
  assert.equal(await presented(port, c.pki.ca, "b.test"), fb);
  assert.equal(await presented(port, c.pki.ca, "unknown.test"), fa, "the first is the default");

  const h2 = await curl(port, ca, "a.test", "/x", ["--http2"]);
  assert.deepEqual([h2.version, h2.status, h2.body], ["2", 200, "app a"]);
  const h1 = await curl(port, ca, "b.test", "/y", ["--http1.1"]);
  assert.deepEqual([h1.version, h1.status, h1.body], ["1.1", 200, "app b"]);
});

Deno.test("strict SNI: a host no certificate names, or a second host on a connection, gets 421", async () => {
  await using c = await certs();
  await using s = await startScalwsd(config(c));
  const port = s.server.bound.get("https")!.port;
  const ca = c.pki.caFile;
  // other.test is an application's domain, but no certificate of the listener names it.
  const other = await curl(port, ca, "a.test", "/", ["--http1.1", "-H", "Host: other.test"]);
  assert.deepEqual([other.status, other.body], [421, "Misdirected Request\n"]);

  // The SNI name decides from the first request on: b.test has a certificate of this listener,
  // but not the one a.test chose (domain fronting).
  const fronted = await TlsClient.connect(port, c.pki.ca, "a.test");
  assert.deepEqual(await fronted.get("b.test"), { status: 421, body: "Misdirected Request\n" });
  assert.deepEqual(await fronted.get("x.a.test"), { status: 200, body: "app a" }, "same cert");
  await fronted.close();
  const h2first = h2Session(port, c.pki.ca);
  try {
    assert.deepEqual(await h2get(h2first, "/", `b.test:${port}`), {
      status: 421,
      body: "Misdirected Request\n",
    });
  } finally {
    await new Promise<void>((r) => h2first.close(() => r()));
  }

  // HTTP/1.1: every request of the connection is checked against its SNI name.
  const k = await TlsClient.connect(port, c.pki.ca, "a.test");
  assert.deepEqual(await k.get("a.test"), { status: 200, body: "app a" });
  assert.deepEqual(await k.get("b.test"), { status: 421, body: "Misdirected Request\n" });
  assert.deepEqual(
    await k.get("a.test:443"),
    { status: 200, body: "app a" },
    "ports do not count",
  );
  await k.close();

  // HTTP/2: a coalesced request for another certificate's host on the same session.
  const session = h2Session(port, c.pki.ca);
  try {
    assert.deepEqual(await h2get(session, "/"), { status: 200, body: "app a" });
    assert.deepEqual(await h2get(session, "/", `b.test:${port}`), {
      status: 421,
      body: "Misdirected Request\n",
    });
  } finally {
    await new Promise<void>((r) => session.close(() => r()));
  }
});

Deno.test("strict_sni: false serves any configured host on a TLS connection", async () => {
  await using c = await certs();
  await using s = await startScalwsd(config(c, { strict_sni: false }));
  const port = s.server.bound.get("https")!.port;
  const r = await curl(port, c.pki.caFile, "a.test", "/", [
    "--http1.1",
    "-H",
    "Host: other.test",
  ]);
  assert.deepEqual([r.status, r.body], [200, "app a"]);
  const k = await TlsClient.connect(port, c.pki.ca, "a.test");
  assert.deepEqual(await k.get("a.test"), { status: 200, body: "app a" });
  assert.deepEqual(await k.get("b.test"), { status: 200, body: "app b" });
  await k.close();
});

Deno.test("a connection that does not finish its TLS handshake in time is dropped and no longer counted", async () => {
  await using c = await certs();
  // 500 ms: curl's own handshakes must fit in it on a busy machine.
  await using s = await startScalwsd(config(c, { handshake_timeout: "500ms" }, { limit_conn: 1 }));
  const port = s.server.bound.get("https")!.port;
  const ca = c.pki.caFile;
  const raw = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    // The silent connection holds the peer's only slot...
    await sleep(50);
    const refused = await curl(port, ca, "a.test", "/", ["--http1.1"]);
    assert.equal(refused.status, 429);
    // ...until its handshake time runs out.
    await sleep(700);
    const ok = await curl(port, ca, "a.test", "/", ["--http1.1"]);
    assert.deepEqual([ok.status, ok.body], [200, "app a"]);
    // A handshake finished late gets a connection that serves nothing.
    using late = await Deno.startTls(raw, { hostname: "a.test", caCerts: [c.pki.ca] });
    const get = new TextEncoder().encode("GET / HTTP/1.1\r\nhost: a.test\r\n\r\n");
    const n = await late.write(get).then(() => late.read(new Uint8Array(100))).catch(() => null);
    assert.equal(n, null);
    // Both are logged: no ClientHello in time, and a ClientHello whose handshake never ended.
    const stalled = await Deno.connect({ hostname: "127.0.0.1", port });
    await stalled.write(await clientHello("a.test"));
    const failed = () =>
      s.logs.map((l) => JSON.parse(l)).filter((l) => l.event === "tls_handshake_failed")
        .map((l) => [l.listener, l.sni, l.reason].join(" "));
    const stalledLine = "https a.test handshake not finished within handshake_timeout (500 ms)";
    await waitUntil(() => failed().includes(stalledLine), {
      what: "the stalled handshake's tls_handshake_failed line",
      timeoutMs: 5_000,
    }).finally(() => stalled.close());
    assert.ok(
      failed().includes("https  no ClientHello within handshake_timeout (500 ms)"),
      failed().join("\n"),
    );
  } catch (err) {
    try {
      raw.close();
    } catch { /* closed by startTls */ }
    throw err;
  }
});

Deno.test("a drain waits a moment for TLS handshakes under way, then drops a stalled one", async () => {
  await using c = await certs();
  await using s = await startScalwsd(config(c));
  const port = s.server.bound.get("https")!.port;
  // A ClientHello, then silence: the handshake never ends.
  const stalled = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await stalled.write(await clientHello("a.test"));
    await sleep(200);
    const start = Date.now();
    const drained = await Promise.race([s.close().then(() => true), sleep(5000).then(() => false)]);
    const took = Date.now() - start;
    assert.ok(drained && took < 3000, `the drain took ${took} ms (done: ${drained})`);
    // The client is disconnected too (its ServerHello may come first).
    const buf = new Uint8Array(16 * 1024);
    const end = Date.now() + 3000;
    let n: number | null = 0;
    while (n !== null && Date.now() < end) n = await stalled.read(buf).catch(() => null);
    assert.equal(n, null, "the stalled client is still connected");
  } finally {
    stalled.close();
  }
});

Deno.test("a drain hands on a connection still sending its ClientHello, and serves it", async () => {
  await using c = await certs();
  await using s = await startScalwsd(config(c));
  const port = s.server.bound.get("https")!.port;
  // A real TLS client through a pass-through that holds back most of the ClientHello.
  using gate = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const answer = new Promise<string>((resolve, reject) => {
    const t = tls.connect({
      host: "127.0.0.1",
      port: gate.addr.port,
      ca: c.pki.ca,
      servername: "a.test",
    });
    let text = "";
    t.setEncoding("latin1");
    t.once("secureConnect", () => t.write("GET / HTTP/1.1\r\nhost: a.test\r\n\r\n"));
    t.on("data", (d: string) => (text += d));
    t.once("end", () => resolve(text));
    t.once("close", () => resolve(text));
    t.once("error", reject);
  });
  const client = await gate.accept();
  const server = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const hello = new Uint8Array(16 * 1024);
    const n = (await client.read(hello))!;
    await server.write(hello.subarray(0, 20));
    await sleep(100);
    const drained = s.close();
    await sleep(200);
    await server.write(hello.subarray(20, n));
    const back = client.readable.pipeTo(server.writable).catch(() => {});
    const forth = server.readable.pipeTo(client.writable).catch(() => {});
    const text = await Promise.race([answer, sleep(5000).then(() => "no answer")]);
    assert.match(text, /^HTTP\/1\.1 200 /, text);
    assert.match(text, /app a/);
    await drained;
    await Promise.race([Promise.all([back, forth]), sleep(2000)]);
  } finally {
    try {
      client.close();
    } catch { /* piped to the end */ }
    try {
      server.close();
    } catch { /* piped to the end */ }
  }
});

const MAIN = new URL("../main.ts", import.meta.url).pathname;

async function check(file: string): Promise<{ code: number; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN, "check", "--config", file],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("certificates reload with the configuration; a bad one is refused by check and reload", async () => {
  await using c = await certs();
  await using s = await startScalwsd(config(c));
  const port = s.server.bound.get("https")!.port;
  const fa = await fingerprint(c.a.cert);
  const kept = await TlsClient.connect(port, c.pki.ca, "a.test");
  assert.deepEqual(await kept.get("a.test"), { status: 200, body: "app a" });

  // A renewed certificate for a.test: new connections get it, open ones keep being served.
  const a2 = await c.pki.issue("a2", ["a.test", "*.a.test"]);
  const renewed: Certs = { ...c, a: a2 };
  await s.write(config(renewed));
  const ok = await s.server.reload();
  assert.equal(ok.ok, true, JSON.stringify(ok));
  assert.equal(s.server.bound.get("https")!.port, port, "rebound on the same port");
  const fa2 = await fingerprint(a2.cert);
  assert.notEqual(fa2, fa);
  assert.equal(await presented(port, c.pki.ca, "a.test"), fa2);
  assert.deepEqual(await kept.get("a.test"), { status: 200, body: "app a" });
  await kept.close();

  // A file that holds no certificate, and a key of another certificate: refused, no change.
  const junk = `${c.pki.dir}/junk.pem`;
  await Deno.writeTextFile(junk, "not a certificate\n");
  const cases: [Certs, string][] = [
    [
      { ...c, a: { cert: junk, key: a2.key } },
      `server.listeners[0].tls.certificates[0].cert: "${junk}" holds no PEM certificate`,
    ],
    [
      { ...c, a: { cert: a2.cert, key: c.b.key } },
      `server.listeners[0].tls.certificates[0].key: does not belong to the certificate in "${a2.cert}"`,
    ],
    [
      { ...c, a: { cert: `${c.pki.dir}/missing.pem`, key: a2.key } },
      `server.listeners[0].tls.certificates[0].cert: cannot read "${c.pki.dir}/missing.pem": `,
    ],
  ];
  for (const [bad, message] of cases) {
    await s.write(config(bad));
    const refused = await s.server.reload();
    assert.equal(refused.ok, false);
    const errors = refused.ok ? [] : refused.errors;
    assert.equal(errors.length, 1, JSON.stringify(errors));
    const placed = (line: string) => line.replace(/^(.*?):\d+:\d+: /, "$1: ");
    assert.ok(placed(errors[0]).startsWith(`${s.file}: ${message}`), errors[0]);
    assert.equal(await presented(port, c.pki.ca, "a.test"), fa2, "nothing changed");
    const r = await check(s.file);
    assert.equal(r.code, 1);
    assert.ok(placed(r.stderr).startsWith(`${s.file}: ${message}`), r.stderr);
  }
  await s.write(config(renewed));
  assert.deepEqual(await check(s.file), { code: 0, stderr: "" });
});

Deno.test("a certificate, its chain and its key in one file serve as both cert and key", async () => {
  await using c = await certs();
  // As nginx and Deno's TLS read it: the key block is found among the certificates.
  const combined = `${c.pki.dir}/a-combined.pem`;
  await Deno.writeTextFile(
    combined,
    Deno.readTextFileSync(c.a.cert) + Deno.readTextFileSync(c.pki.caFile) +
      Deno.readTextFileSync(c.a.key),
  );
  await using s = await startScalwsd(config({ ...c, a: { cert: combined, key: combined } }));
  const port = s.server.bound.get("https")!.port;
  assert.equal(await presented(port, c.pki.ca, "a.test"), await fingerprint(c.a.cert));
  const r = await curl(port, c.pki.caFile, "a.test", "/");
  assert.deepEqual([r.status, r.body], [200, "app a"]);
});

Deno.test("a failed TLS handshake is logged with the TLS library's reason and the SNI name", async () => {
  await using c = await certs();
  await using s = await startScalwsd(config(c));
  const port = s.server.bound.get("https")!.port;
  // Plain HTTP to the TLS port: no ClientHello, refused by the TLS library.
  const raw = await Deno.connect({ hostname: "127.0.0.1", port });
  await raw.write(new TextEncoder().encode("GET / HTTP/1.1\r\nhost: a.test\r\n\r\n"));
  await raw.read(new Uint8Array(512)).catch(() => null);
  raw.close();
  // A client that does not trust the certificate (no CA given) aborts the handshake.
  await presented(port, "", "b.test").catch(() => {});
  const failed = () => s.logs.filter((l) => l.includes('"tls_handshake_failed"'));
  await waitUntil(() => failed().length >= 2, {
    what: "two tls_handshake_failed lines",
    timeoutMs: 10_000,
  });
  const lines = failed().map((l) => JSON.parse(l));
  assert.equal(lines[0].level, "warn");
  assert.equal(lines[0].listener, "https");
  assert.equal(lines[0].peer, "127.0.0.1");
  assert.equal(lines[0].sni, "");
  assert.ok(lines[0].reason.length > 0);
  assert.equal(lines[1].sni, "b.test");
  assert.match(lines[1].reason, /alert|certificate|UnknownCA|closed|eof/i);
});

Deno.test("TLS sessions resume (TLS 1.2 session ids, TLS 1.3 tickets), across reloads that keep them", async () => {
  await using c = await certs();
  await using s = await startScalwsd(config(c));
  const port = s.server.bound.get("https")!.port;
  const sess = `${c.pki.dir}/session.pem`;
  const client = async (version: string, session: string[], host = "a.test") => {
    const cmd = new Deno.Command("openssl", {
      args: [
        "s_client",
        "-connect",
        `127.0.0.1:${port}`,
        "-servername",
        host,
        version,
        "-CAfile",
        c.pki.caFile,
        "-ign_eof",
        ...session,
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const w = cmd.stdin.getWriter();
    // A request and its answer: the TLS 1.3 tickets arrive after the handshake.
    await w.write(
      new TextEncoder().encode(`GET / HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n\r\n`),
    );
    await w.close();
    const out = new TextDecoder().decode((await cmd.output()).stdout);
    return /^(New|Reused),/m.exec(out)?.[1];
  };
  // TLS 1.3 tickets are single use: every connection keeps the newest session.
  const again = (version: string, host = "a.test") =>
    client(version, ["-sess_in", sess + version + host, "-sess_out", sess + version + host], host);
  for (const version of ["-tls1_2", "-tls1_3"]) {
    assert.equal(await client(version, ["-sess_out", sess + version + "a.test"]), "New", version);
    assert.equal(await again(version), "Reused", version);
  }
  const b = "b.test";
  assert.equal(await client("-tls1_3", ["-sess_out", sess + "-tls1_3" + b], b), "New");
  // A reload that keeps the certificates keeps their listeners, and so the sessions.
  await s.write(config(c, { handshake_timeout: "9s" }));
  assert.equal((await s.server.reload()).ok, true);
  for (const version of ["-tls1_2", "-tls1_3"]) {
    assert.equal(await again(version), "Reused", `${version} after a reload`);
  }
  // A new certificate is a new listener: a full handshake, then resumption again. The other
  // certificate keeps its listener and its sessions.
  const a2 = await c.pki.issue("a2", ["a.test", "*.a.test"]);
  await s.write(config({ ...c, a: a2 }));
  assert.equal((await s.server.reload()).ok, true);
  for (const version of ["-tls1_2", "-tls1_3"]) {
    assert.equal(await again(version), "New", `${version} after new certificates`);
    assert.equal(await again(version), "Reused", `${version} on the new certificate`);
  }
  assert.equal(await again("-tls1_3", b), "Reused", "b.test's certificate did not change");
  // The kept listener serves with the new configuration: strict SNI against the new set.
  const onB = await TlsClient.connect(port, c.pki.ca, b);
  assert.deepEqual(await onB.get(b), { status: 200, body: "app b" });
  assert.equal((await onB.get("a.test")).status, 421);
  await onB.close();
});
