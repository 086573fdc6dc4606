/**
 * TLS terminated on the public socket (src/server/tls_direct.ts): taken by a listener with one
 * certificate where `net.ipv4.tcp_migrate_req` is 1. This machine's may be 0, so the test runs
 * itself again inside a network namespace of its own (`unshare -rn`: its own loopback and its
 * own `tcp_migrate_req`, set to 1 there); without `unshare` it is ignored.
 */
import assert from "node:assert/strict";
import tls from "node:tls";
import { startPki, startScalwsd, waitUntil } from "./_support/mod.ts";
import { app, httpsListener, respond, scalwsYaml } from "./_support/yaml.ts";
import { curl, fingerprint, handshake, ReconnectLoad, requestOnce } from "./_support/tls_client.ts";
import { canUnshare, INSIDE, runSelfInNamespace } from "./_support/netns.ts";
import { H2Raw, request } from "./_support/h2_raw.ts";
import { hostSupport } from "../src/server/tls_direct.ts";

const SELF = new URL(import.meta.url).pathname;

Deno.test({
  name: "TLS direct: this file passes inside a namespace whose tcp_migrate_req is 1",
  ignore: INSIDE || !canUnshare(),
  fn: async () => {
    const { code, text } = await runSelfInNamespace(SELF, {
      setup: "echo 1 > /proc/sys/net/ipv4/tcp_migrate_req",
    });
    assert.equal(code, 0, text);
    assert.match(text, /ok \| 4 passed \| 0 failed \| 1 ignored/);
  },
});

/** The size of the HTTP/2 download: 64 flow-control windows of 64 KiB. */
const DOWNLOAD = 4 * 1024 * 1024;

/** One TLS listener with `certs`; with `files`, a static application on files.a.test too. */
function config(certs: readonly { cert: string; key: string }[], files?: string): string {
  const static_ = {
    name: "files",
    domains: ["files.a.test"],
    runtime: { type: "static", root: files },
  };
  return scalwsYaml({
    server: { listeners: [httpsListener(certs)], admin: undefined },
    apps: [
      app(respond("app a"), { domains: ["a.test", "b.test"] }),
      ...(files === undefined ? [] : [static_]),
    ],
  });
}

function modes(logs: readonly string[]): string[] {
  return logs.map((l) => JSON.parse(l)).filter((e) => e.event === "tls_termination")
    .map((e) => e.mode);
}

function fds(): number {
  return [...Deno.readDirSync("/proc/self/fd")].length;
}

Deno.test({
  name: "TLS direct: one certificate is served on the public socket, one descriptor each",
  ignore: !INSIDE,
  fn: async () => {
    assert.equal(hostSupport().migrateReq, true);
    await using pki = await startPki();
    const a = await pki.issue("a", ["a.test", "*.a.test"]);
    await Deno.mkdir(`${pki.dir}/www`);
    await Deno.writeFile(`${pki.dir}/www/big.bin`, new Uint8Array(DOWNLOAD));
    await using s = await startScalwsd(config([a], `${pki.dir}/www`));
    assert.deepEqual(modes(s.logs), ["direct"]);
    const port = s.server.bound.get("https")!.port;
    assert.equal((await curl(port, pki.caFile, "a.test", "/")).status, 200);
    // Strict SNI: the certificate does not name b.test.
    assert.equal((await curl(port, pki.caFile, "a.test", "/", ["-H", "host: b.test"])).status, 421);
    // An HTTP/2 download with 64 KiB windows: with Nagle's algorithm on (a Deno.TlsConn has no
    // setNoDelay) each window waited for a delayed ACK, about 40 ms: 3 s and more for these 64.
    const started = performance.now();
    const h2 = await new Deno.Command("h2load", {
      args: [
        "-n1",
        "-c1",
        "-w16",
        "-W16",
        `--connect-to=127.0.0.1:${port}`,
        "https://files.a.test/big.bin",
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const took = performance.now() - started;
    const text = new TextDecoder().decode(h2.stdout);
    assert.match(text, /status codes: 1 2xx/, text);
    assert.ok(took < 1500, `${took.toFixed(0)} ms for ${DOWNLOAD} bytes`);
    // A refused handshake ends with the alert handshake_failure: no RSA certificate here.
    const rsaOnly = await handshake(port, pki.caFile, "a.test", ["-sigalgs", "RSA-PSS+SHA256"]);
    assert.equal(rsaOnly.alert, 40, rsaOnly.text);
    // 40 idle TLS connections: 40 client sockets and 40 server ones (the relay: 3 each).
    const before = fds();
    const held: tls.TLSSocket[] = [];
    for (let i = 0; i < 40; i++) {
      held.push(
        await new Promise((resolve, reject) => {
          const c = tls.connect({ host: "127.0.0.1", port, ca: pki.ca, servername: "a.test" });
          c.once("secureConnect", () => resolve(c));
          c.once("error", reject);
        }),
      );
    }
    await waitUntil(() => fds() - before >= 80, { what: "accepted", timeoutMs: 5_000 });
    await new Promise((r) => setTimeout(r, 200));
    const grew = fds() - before;
    for (const c of held) c.destroy();
    assert.ok(grew <= 82, `${grew} descriptors for 40 connections (both ends)`);
  },
});

Deno.test({
  name: "TLS direct: certificate changes, direct to relayed and back, refuse no connection",
  ignore: !INSIDE,
  fn: async () => {
    await using pki = await startPki();
    const one = await pki.issue("one", ["a.test"]);
    const two = await pki.issue("two", ["a.test"]);
    const other = await pki.issue("other", ["b.test"]);
    const prints = [await fingerprint(one.cert), await fingerprint(two.cert)];
    await using s = await startScalwsd(config([one]));
    const port = s.server.bound.get("https")!.port;
    let step = 0;
    const load = new ReconnectLoad(port, pki.ca, { context: () => `step ${step}` });
    // one, two, two+other (relayed), one, ...: every kind of change, twice.
    const steps = [[two], [two, other], [one], [one, other], [two], [one]];
    try {
      for (const certs of steps) {
        step++;
        await load.more(3);
        await s.write(config(certs));
        const r = await s.server.reload();
        assert.equal(r.ok, true, JSON.stringify(r));
        assert.equal(s.server.bound.get("https")!.port, port);
        assert.equal((await requestOnce(port, pki.ca)).fp, prints[certs[0] === one ? 0 : 1]);
      }
    } finally {
      await load.stop();
    }
    assert.deepEqual(load.failures, []);
    assert.deepEqual(modes(s.logs), [
      "direct",
      "direct",
      "relay",
      "direct",
      "relay",
      "direct",
      "direct",
    ]);
  },
});

/** Bytes `conn` gets until the server closes it, and after how long (ms); null: still open. */
async function untilClosed(conn: Deno.Conn, withinMs: number): Promise<number | null> {
  const started = performance.now();
  const timer = setTimeout(() => conn.close(), withinMs);
  const buf = new Uint8Array(16384);
  try {
    while ((await conn.read(buf)) !== null);
    return performance.now() - started;
  } catch {
    return null; // closed here at withinMs
  } finally {
    clearTimeout(timer);
  }
}

Deno.test({
  name: "TLS direct: a handshake not finished within handshake_timeout is disconnected",
  ignore: !INSIDE,
  fn: async () => {
    await using pki = await startPki();
    const a = await pki.issue("a", ["a.test"]);
    await using s = await startScalwsd(scalwsYaml({
      server: {
        listeners: [{
          ...httpsListener(a),
          tls: { ...httpsListener(a).tls, handshake_timeout: "500ms" },
        }],
        admin: undefined,
      },
      apps: [app(respond("app a"))],
    }));
    assert.deepEqual(modes(s.logs), ["direct"]);
    const port = s.server.bound.get("https")!.port;
    // Deno's TlsConn.close() cancelled the handshake but kept the socket: these stayed open.
    const silent = await Deno.connect({ hostname: "127.0.0.1", port });
    const stalled = await Deno.connect({ hostname: "127.0.0.1", port });
    await stalled.write(await clientHello());
    const [a1, a2] = await Promise.all([untilClosed(silent, 5000), untilClosed(stalled, 5000)]);
    assert.ok(a1 !== null && a1 >= 400 && a1 < 3000, `silent client closed after ${a1} ms`);
    assert.ok(a2 !== null && a2 >= 400 && a2 < 3000, `stalled client closed after ${a2} ms`);
    const failed = (l: string) => l.includes("handshake not finished within handshake_timeout");
    await waitUntil(() => s.logs.filter(failed).length === 2, { what: "two tls_handshake_failed" });
    // The listener serves on.
    assert.equal((await curl(port, pki.caFile, "a.test", "/")).status, 200);
  },
});

/** The first flight of a TLS client for a.test: its ClientHello, taken from node:tls. */
function clientHello(): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const server = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const socket = tls.connect({
      host: "127.0.0.1",
      port: (server.addr as Deno.NetAddr).port,
      servername: "a.test",
      rejectUnauthorized: false,
    });
    socket.on("error", () => {});
    server.accept().then(async (c) => {
      const buf = new Uint8Array(16384);
      const n = await c.read(buf);
      c.close();
      server.close();
      socket.destroy();
      if (n === null) reject(new Error("no ClientHello"));
      else resolve(buf.slice(0, n));
    }, reject);
  });
}

Deno.test({
  name: "TLS direct: an idle HTTP/2 client that does not answer the GOAWAY's PING is disconnected",
  ignore: !INSIDE,
  fn: async () => {
    await using pki = await startPki();
    const a = await pki.issue("a", ["a.test"]);
    await using s = await startScalwsd(scalwsYaml({
      server: {
        listeners: [httpsListener(a)],
        admin: undefined,
        limits: { idle_timeout: "300ms" },
      },
      apps: [app(respond("app a"))],
    }));
    assert.deepEqual(modes(s.logs), ["direct"]);
    const port = s.server.bound.get("https")!.port;
    // hyper's graceful GOAWAY waits for the PING's answer; Deno could not end it: it stayed open.
    await using h2 = await H2Raw.connect({
      port,
      ca: pki.ca,
      servername: "a.test",
      answerPings: false,
    });
    await h2.send(request(1, "a.test", "/"));
    assert.ok(await h2.until(() => h2.stream(1).ended, 3000));
    assert.equal(h2.stream(1).status, 200);
    const started = performance.now();
    assert.ok(await h2.until(() => h2.closed, 6000), "still open 6 s after going idle");
    assert.ok(performance.now() - started < 4000, `closed after ${performance.now() - started} ms`);
    assert.equal(h2.goaways[0]?.code, 0);
  },
});
