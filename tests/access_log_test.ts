/**
 * The access log's fields, exactly named: host, protocol (HTTP/1.0, HTTP/1.1, HTTP/2),
 * user_agent, referer, request_id (a trusted proxy's kept, else made, and sent to members),
 * upstream_connect and upstream_header (seconds), and bytes for every answer, scalwsd's own too.
 */
import assert from "node:assert/strict";
import { app, scalwsYaml, startMember, startPki, startScalwsd, tempDir } from "./_support/mod.ts";
import { httpsListener } from "./_support/yaml.ts";
import { curl } from "./_support/tls_client.ts";

const FIELDS = [
  "time",
  "tenant",
  "app",
  "host",
  "protocol",
  "method",
  "path",
  "status",
  "bytes",
  "duration",
  "upstream_member",
  "upstream_attempts",
  "upstream_connect",
  "upstream_header",
  "client",
  "cache",
  "user_agent",
  "referer",
  "request_id",
];

/** The plain listener's address: another than the TLS one's (two `:0` listeners on one host
 * are one listener to scalwsd). */
const PLAIN = "127.0.0.5";

/** Writes `text` (lines joined by CRLF) to the plain listener; reads until it closes. */
async function raw(port: number, text: string): Promise<void> {
  const conn = await Deno.connect({ hostname: PLAIN, port });
  await conn.write(new TextEncoder().encode(text.replaceAll("\n", "\r\n")));
  const buf = new Uint8Array(4096);
  const deadline = setTimeout(() => conn.close(), 3_000);
  try {
    while ((await conn.read(buf)) !== null) { /* the answer */ }
    conn.close();
  } catch { /* closed by the deadline */ }
  clearTimeout(deadline);
}

Deno.test("access log: host, protocol, user agent, referer, request id, upstream times and bytes of every answer", async () => {
  const seen: (string | null)[] = [];
  await using m = startMember("m", (req) => {
    seen.push(req.headers.get("x-request-id"));
    return new Response("member says hi");
  });
  await using pki = await startPki();
  const cert = await pki.issue("a", ["a.test"]);
  await using dir = await tempDir();
  const logFile = `${dir.path}/access.log`;
  let ports: { http: number; https: number };
  {
    await using s = await startScalwsd(
      scalwsYaml({
        server: {
          listeners: [
            { name: "http", address: `${PLAIN}:0` },
            httpsListener(cert),
          ],
          trusted_proxies: ["127.0.0.2/32"],
        },
        apps: [app({ type: "proxy", upstream: `http://${m.address}` }, {
          routes: [{ path: "/own", runtime: { type: "respond", body: "own" } }],
        })],
      }),
      { accessLog: logFile },
    );
    ports = { http: s.server.bound.get("http")!.port, https: s.server.bound.get("https")!.port };
    // 1: HTTP/1.1 through the member, with a user agent, a referer and an id of its own
    //    (from an untrusted peer: replaced).
    await raw(
      ports.http,
      'GET /p?q=1 HTTP/1.1\nHost: A.test:8080\nUser-Agent: ua/1 "x"\nReferer: http://r.test/\nX-Request-Id: spoofed\nConnection: close\n\n',
    );
    // 2: HTTP/1.0, scalwsd's own answer.
    await raw(ports.http, "GET /own HTTP/1.0\nHost: a.test\n\n");
    // 3: an unknown host: scalwsd's 404 with its body counted.
    await raw(ports.http, "GET /x HTTP/1.1\nHost: nope.test\nConnection: close\n\n");
    // 4: HTTP/2.
    const h2 = await curl(ports.https, pki.caFile, "a.test", "/h2", ["--http2", "-A", "curl-h2"]);
    assert.equal(h2.version, "2");
    // 5: from a trusted proxy (127.0.0.2): its id is kept and passed on.
    const trusted = await fetchFrom("127.0.0.2", ports.http, "trusted-id-42");
    assert.equal(trusted, 200, s.logs.join("\n"));
  }
  const lines = (await Deno.readTextFile(logFile)).trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines.length, 5, JSON.stringify(lines));
  // These fields, in this order (other fields, like TLS's, may come between or after).
  for (const l of lines) {
    const keys = Object.keys(l);
    assert.deepEqual(keys.filter((k) => FIELDS.includes(k)), FIELDS);
  }
  const [p, own, unknown, viaH2, kept] = lines;

  assert.equal(p.host, "a.test");
  assert.equal(p.protocol, "HTTP/1.1");
  assert.equal(p.user_agent, 'ua/1 "x"');
  assert.equal(p.referer, "http://r.test/");
  assert.equal(p.bytes, "member says hi".length);
  assert.match(p.request_id, /^[0-9a-f]{32}$/);
  assert.notEqual(p.request_id, "spoofed");
  assert.equal(typeof p.upstream_connect, "number");
  assert.equal(typeof p.upstream_header, "number");
  assert.ok(p.upstream_connect >= 0 && p.upstream_connect <= p.upstream_header, JSON.stringify(p));
  assert.ok(p.upstream_header <= p.duration, JSON.stringify(p));

  assert.deepEqual(
    [own.protocol, own.status, own.bytes, own.user_agent, own.referer, own.upstream_connect],
    ["HTTP/1.0", 200, 3, null, null, null],
  );
  assert.deepEqual(
    [unknown.host, unknown.status, unknown.bytes, unknown.tenant],
    ["nope.test", 404, "Not Found: unknown host\n".length, "-"],
  );
  assert.deepEqual([viaH2.protocol, viaH2.host, viaH2.user_agent], ["HTTP/2", "a.test", "curl-h2"]);
  assert.equal(kept.request_id, "trusted-id-42");
  // Every id differs, and the member got each proxied request's id.
  assert.equal(new Set(lines.map((l) => l.request_id)).size, 5);
  assert.deepEqual(seen, [p.request_id, viaH2.request_id, "trusted-id-42"]);
});

/** A GET from `source` (a loopback address) carrying `X-Request-Id: id`; the status. */
async function fetchFrom(source: string, port: number, id: string): Promise<number> {
  const out = await new Deno.Command("curl", {
    args: [
      "-s",
      "--max-time",
      "5",
      "--interface",
      source,
      "-H",
      "host: a.test",
      "-H",
      `x-request-id: ${id}`,
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      `http://${PLAIN}:${port}/t`,
    ],
    stdout: "piped",
  }).output();
  return Number(new TextDecoder().decode(out.stdout));
}
