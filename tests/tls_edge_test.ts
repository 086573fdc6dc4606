/**
 * The TLS edge of a relayed listener: an RSA and an ECDSA certificate for one name, chosen by
 * the client's signature algorithms; a TLS alert on every refused handshake; `tls.unknown_sni:
 * refuse`. One scalwsd with two TLS listeners; `openssl s_client` as the client.
 */
import assert from "node:assert/strict";
import { app, respond, scalwsYaml, startPki, startScalwsd } from "./_support/mod.ts";
import { curl, handshake } from "./_support/tls_client.ts";

Deno.test("TLS edge: both certificate types for one name, alerts on refused handshakes, unknown_sni refuse", async (t) => {
  await using pki = await startPki();
  const ec = await pki.issue("ec", ["a.test", "www.a.test"]);
  const rsa = await pki.issue("rsa", ["a.test", "www.a.test"], { rsa: true });
  const b = await pki.issue("b", ["b.test"]);
  await using s = await startScalwsd(scalwsYaml({
    server: {
      listeners: [
        { name: "https", address: "127.0.0.1:0", tls: { certificates: [rsa, ec, b] } },
        {
          // Another address: listeners are told apart by address and port.
          name: "refusing",
          address: "127.0.0.2:0",
          tls: { certificates: [ec], unknown_sni: "refuse" },
        },
      ],
    },
    apps: [app(respond("app a"), { domains: ["a.test", "www.a.test", "b.test"] })],
  }));
  const port = s.server.bound.get("https")!.port;
  const refusing: [string, number] = ["127.0.0.2", s.server.bound.get("refusing")!.port];
  const ca = pki.caFile;

  await t.step(
    "the client's signature algorithms choose the ECDSA or the RSA certificate",
    async () => {
      const both = await handshake(port, ca, "a.test");
      assert.equal(both.signature, "ECDSA", both.text);
      for (const v of ["-tls1_3", "-tls1_2"]) {
        const ecOnly = await handshake(port, ca, "a.test", [v, "-sigalgs", "ECDSA+SHA256"]);
        assert.equal(ecOnly.signature, "ECDSA", ecOnly.text);
        const rsaOnly = await handshake(port, ca, "a.test", [v, "-sigalgs", "RSA-PSS+SHA256"]);
        assert.equal(rsaOnly.signature, "RSA-PSS", rsaOnly.text);
      }
      const pkcs1 = await handshake(port, ca, "www.a.test", ["-tls1_2", "-sigalgs", "RSA+SHA256"]);
      assert.equal(pkcs1.signature, "RSA", pkcs1.text);
      // TLS 1.2 names the key type in the cipher suite too.
      const suite = await handshake(port, ca, "a.test", [
        "-tls1_2",
        "-cipher",
        "ECDHE-RSA-AES128-GCM-SHA256",
      ]);
      assert.equal(suite.signature, "RSA-PSS", suite.text);
      const noSni = await handshake(port, ca, null, ["-sigalgs", "RSA-PSS+SHA256"]);
      assert.equal(noSni.signature, "RSA-PSS", "no SNI: the first certificate, or its twin");
      assert.equal((await curl(port, ca, "a.test", "/")).body, "app a");
    },
  );

  await t.step("a refused handshake ends with a TLS alert (handshake_failure)", async () => {
    const none = await handshake(port, ca, "b.test", ["-sigalgs", "RSA-PSS+SHA256"]);
    assert.equal(none.alert, 40, none.text);
    const ed = await handshake(port, ca, "a.test", ["-sigalgs", "ed25519"]);
    assert.equal(ed.alert, 40, ed.text);
  });

  await t.step(
    "TLS_FALLBACK_SCSV below TLS 1.3 gets inappropriate_fallback (RFC 7507)",
    async () => {
      const fallback = await handshake(port, ca, "a.test", ["-tls1_2", "-fallback_scsv"]);
      assert.equal(fallback.alert, 86, fallback.text);
      const plain12 = await handshake(port, ca, "a.test", ["-tls1_2"]);
      assert.equal(plain12.version, "TLSv1.2", plain12.text);
    },
  );

  await t.step(
    "tls.unknown_sni: refuse ends an unknown name's handshake with unrecognized_name",
    async () => {
      const known = await handshake(refusing, ca, "a.test");
      assert.equal(known.signature, "ECDSA", known.text);
      const unknown = await handshake(refusing, ca, "c.test");
      assert.equal(unknown.alert, 112, unknown.text);
      const noName = await handshake(refusing, ca, null);
      assert.equal(noName.alert, 112, noName.text);
      const line = s.logs.find((l) => l.includes('"tls_handshake_failed"') && l.includes("c.test"));
      assert.ok(line !== undefined, "logged");
      assert.equal(JSON.parse(line).listener, "refusing");
      // The default listener answers an unknown name with its first certificate.
      assert.equal((await handshake(port, ca, "c.test", ["-verify_return_error"])).alert, 0);
    },
  );
});
