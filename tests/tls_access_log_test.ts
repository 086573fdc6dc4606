/**
 * The access log's TLS fields (`tls`, `tls_cipher`, `tls_resumed`, `sni`) on a relayed TLS
 * listener (two certificates: always relayed), with sessions resumed by `openssl s_client`.
 */
import assert from "node:assert/strict";
import { startPki, startScalwsd, tempDir } from "./_support/mod.ts";
import { app, httpsListener, respond, scalwsYaml } from "./_support/yaml.ts";

/** One request with `openssl s_client`, saving (and with `sessIn`, offering) the session. */
async function sClient(
  port: number,
  caFile: string,
  version: string,
  sessOut: string,
  sessIn?: string,
) {
  const args = ["s_client", "-connect", `127.0.0.1:${port}`, "-servername", "a.test", version];
  args.push("-CAfile", caFile, "-sess_out", sessOut, "-ign_eof");
  if (sessIn !== undefined) args.push("-sess_in", sessIn);
  const child = new Deno.Command("openssl", {
    args,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(
    new TextEncoder().encode("GET / HTTP/1.1\r\nhost: a.test\r\nconnection: close\r\n\r\n"),
  );
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout);
  await w.close().catch(() => {});
  assert.match(text, /HTTP\/1\.1 200/);
}

Deno.test("the access log says the TLS version, cipher, resumption and SNI of each request", async () => {
  await using pki = await startPki();
  const a = await pki.issue("a", ["a.test"]);
  const b = await pki.issue("b", ["b.test"]);
  await using dir = await tempDir();
  const logFile = `${dir.path}/access.log`;
  {
    await using s = await startScalwsd(
      scalwsYaml({
        server: { listeners: [httpsListener([a, b])], admin: undefined },
        apps: [app(respond("app a"))],
      }),
      { accessLog: logFile },
    );
    const port = s.server.bound.get("https")!.port;
    for (const v of ["-tls1_2", "-tls1_3"]) {
      const sess = `${dir.path}/sess${v}`;
      await sClient(port, pki.caFile, v, sess);
      await sClient(port, pki.caFile, v, `${sess}.2`, sess);
    }
  }
  const lines = (await Deno.readTextFile(logFile)).trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(
    lines.map((l) => [l.tls, l.tls_resumed, l.sni]),
    [
      ["TLSv1.2", false, "a.test"],
      ["TLSv1.2", true, "a.test"],
      ["TLSv1.3", false, "a.test"],
      ["TLSv1.3", true, "a.test"],
    ],
  );
  assert.match(
    lines[0].tls_cipher,
    /^TLS_ECDHE_(RSA|ECDSA)_WITH_(AES_(128|256)_GCM_SHA(256|384)|CHACHA20_POLY1305_SHA256)$/,
  );
  assert.match(
    lines[2].tls_cipher,
    /^TLS_(AES_(128|256)_GCM_SHA(256|384)|CHACHA20_POLY1305_SHA256)$/,
  );
});
