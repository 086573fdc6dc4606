import assert from "node:assert/strict";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { selfSigned } from "./self_signed.ts";

Deno.test("selfSigned: a v3 certificate naming the domains, signed by its own key", async () => {
  const now = Date.UTC(2026, 11, 1, 12, 0, 0);
  const s = await selfSigned(["a.test", "b.test"], now, 2);
  const x = new X509Certificate(s.cert);
  assert.equal(x.subjectAltName, "DNS:a.test, DNS:b.test");
  assert.match(x.subject, /CN=a\.test/);
  assert.equal(x.validFromDate.getTime(), now - 3_600_000);
  assert.equal(x.validToDate.getTime(), now + 2 * 86_400_000);
  assert.equal(x.verify(x.publicKey), true);
  assert.equal(x.checkPrivateKey(createPrivateKey(s.key)), true);
});

Deno.test("selfSigned: Deno's TLS server serves it and a client trusting it completes a handshake", async () => {
  const s = await selfSigned(["a.test"], Date.now());
  const l = Deno.listenTls({ hostname: "127.0.0.1", port: 0, cert: s.cert, key: s.key });
  const accepted = l.accept().then(async (c) => {
    await c.handshake();
    return c;
  });
  const port = (l.addr as Deno.NetAddr).port;
  const tcp = await Deno.connect({ hostname: "127.0.0.1", port });
  const c = await Deno.startTls(tcp, { hostname: "a.test", caCerts: [s.cert] });
  await c.handshake();
  c.close();
  (await accepted).close();
  l.close();
});
