import assert from "node:assert/strict";
import tls from "node:tls";
import { startPki, startScalwsd, waitUntil } from "./_support/mod.ts";
import { fingerprint } from "./_support/tls_client.ts";

function config(cert: { cert: string; key: string }): string {
  return `
server:
  listeners:
    - name: https
      address: "127.0.0.1:0"
      tls:
        certificates:
          - {cert: ${cert.cert}, key: ${cert.key}}
  admin: {socket: "{{dir}}/admin.sock"}
tenants:
  - name: t
    applications:
      - name: a
        domains: [a.test]
        runtime: {type: respond, body: "app a"}
`;
}

/** One request on a new TLS connection: the certificate presented and the status, or the error. */
function once(port: number, ca: string): Promise<{ fp: string; status: number }> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: "127.0.0.1", port, ca, servername: "a.test" });
    let fp = "";
    let data = "";
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error("no answer within 10 s"));
    }, 10_000);
    s.setEncoding("latin1");
    s.once("secureConnect", () => {
      fp = s.getPeerCertificate().fingerprint256;
      s.write("GET / HTTP/1.1\r\nhost: a.test\r\nconnection: close\r\n\r\n");
    });
    s.on("data", (d: string) => (data += d));
    s.once("end", () => {
      clearTimeout(timer);
      resolve({ fp, status: Number(data.split(" ")[1]) });
    });
    s.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

Deno.test("ten certificate reloads refuse no new TLS connection, and new ones get the new certificate", async () => {
  await using pki = await startPki();
  const certs = [await pki.issue("one", ["a.test"]), await pki.issue("two", ["a.test"])];
  const prints = [await fingerprint(certs[0].cert), await fingerprint(certs[1].cert)];
  await using s = await startScalwsd(config(certs[0]));
  const port = s.server.bound.get("https")!.port;
  let running = true;
  let done = 0;
  const failures: string[] = [];
  // Two clients, each a new connection per request, bounded by count and by the reloads.
  const client = async () => {
    for (let i = 0; running && i < 5000; i++) {
      try {
        const r = await once(port, pki.ca);
        if (r.status !== 200) failures.push(`status ${r.status}`);
        done++;
      } catch (err) {
        failures.push(String(err));
      }
    }
  };
  const clients = [client(), client()];
  try {
    for (let n = 1; n <= 10; n++) {
      const before = done;
      await waitUntil(() => done >= before + 3, { what: "three requests", timeoutMs: 20_000 });
      await s.write(config(certs[n % 2]));
      const r = await s.server.reload();
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.equal(s.server.bound.get("https")!.port, port);
      assert.equal(
        (await once(port, pki.ca)).fp,
        prints[n % 2],
        `reload ${n}: the new certificate`,
      );
    }
  } finally {
    running = false;
    await Promise.all(clients);
  }
  assert.deepEqual(failures, []);
  assert.ok(done >= 30, `${done} connections`);
});
