import assert from "node:assert/strict";
import { AcmeStore, certificateId } from "./store.ts";

Deno.test("certificateId: first domain and a hash of directory and sorted domains", () => {
  const a = certificateId("https://ca/dir", ["a.test", "b.test"]);
  assert.match(a, /^a\.test-[0-9a-f]{12}$/);
  assert.equal(certificateId("https://ca/dir", ["a.test", "b.test"]), a);
  assert.notEqual(certificateId("https://ca/dir", ["a.test"]), a);
  assert.notEqual(certificateId("https://other/dir", ["a.test", "b.test"]), a);
  // The order of the domains after the first changes only the file name's first part.
  assert.equal(
    certificateId("https://ca/dir", ["b.test", "a.test"]).split("-").at(-1),
    a.split("-").at(-1),
  );
});

Deno.test("AcmeStore: the account key is made once, kept 0600 and read back", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const store = new AcmeStore(dir);
    const k1 = await store.accountKey("https://ca.test/dir");
    const k2 = await new AcmeStore(dir).accountKey("https://ca.test/dir");
    assert.equal(k1.thumbprint, k2.thumbprint);
    const file = store.accountFile("https://ca.test/dir");
    assert.match(file, /\/acme\/accounts\/ca\.test-[0-9a-f]{12}\.json$/);
    assert.equal(Deno.statSync(file).mode! & 0o777, 0o600);
    await Deno.writeTextFile(file, "{not json");
    await assert.rejects(store.accountKey("https://ca.test/dir"), /not a JSON account key/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("AcmeStore: chain and key in one 0600 file, read back apart; a broken file is an error", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const store = new AcmeStore(dir);
    assert.equal(await store.loadCertificate("x"), undefined);
    const cert = "-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----\n" +
      "-----BEGIN CERTIFICATE-----\nBBB\n-----END CERTIFICATE-----\n";
    const key = "-----BEGIN PRIVATE KEY-----\nKKK\n-----END PRIVATE KEY-----\n";
    await store.saveCertificate("x", { cert, key });
    assert.deepEqual(await store.loadCertificate("x"), { cert, key });
    assert.equal(Deno.statSync(store.certificateFile("x")).mode! & 0o777, 0o600);
    await Deno.writeTextFile(store.certificateFile("x"), cert);
    await assert.rejects(
      store.loadCertificate("x"),
      /must hold the certificate chain and its private key/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
