import assert from "node:assert/strict";
import { startPki, startScalwsd } from "./_support/mod.ts";
import { app, httpsListener, respond, scalwsYaml } from "./_support/yaml.ts";
import { fingerprint, ReconnectLoad, requestOnce } from "./_support/tls_client.ts";

function config(cert: { cert: string; key: string }): string {
  return scalwsYaml({
    server: { listeners: [httpsListener(cert)] },
    apps: [app(respond("app a"))],
  });
}

Deno.test("ten certificate reloads refuse no new TLS connection, and new ones get the new certificate", async () => {
  await using pki = await startPki();
  const certs = [await pki.issue("one", ["a.test"]), await pki.issue("two", ["a.test"])];
  const prints = [await fingerprint(certs[0].cert), await fingerprint(certs[1].cert)];
  await using s = await startScalwsd(config(certs[0]));
  const port = s.server.bound.get("https")!.port;
  // Two clients, each a new connection per request, bounded by count and by the reloads.
  const load = new ReconnectLoad(port, pki.ca);
  try {
    for (let n = 1; n <= 10; n++) {
      await load.more(3);
      await s.write(config(certs[n % 2]));
      const r = await s.server.reload();
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.equal(s.server.bound.get("https")!.port, port);
      assert.equal(
        (await requestOnce(port, pki.ca)).fp,
        prints[n % 2],
        `reload ${n}: the new certificate`,
      );
    }
  } finally {
    await load.stop();
  }
  assert.deepEqual(load.failures, []);
  assert.ok(load.done >= 30, `${load.done} connections`);
});
