import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { issueV1, makePki } from "../base/_test_certs.ts";
import { seeded } from "../base/random.ts";
import { x509Version } from "./x509_version.ts";

const der = (pem: string) => new Uint8Array(new X509Certificate(pem).raw);

// `deno task fuzz` runs this file without --allow-run.
const canRun = Deno.permissions.querySync({ name: "run", command: "openssl" }).state === "granted";

Deno.test({
  name: "x509Version: v3 from openssl with extensions, v1 from a bare x509 -req",
  ignore: !canRun,
  async fn() {
    const pki = await makePki();
    try {
      const a = await pki.issue("a", ["a.test"]);
      assert.equal(x509Version(der(await Deno.readTextFile(a.cert))), 3);
      assert.equal(x509Version(der(await Deno.readTextFile(pki.caFile))), 3);
      const v1 = await issueV1(pki, "v1", "v1.test");
      assert.equal(x509Version(der(await Deno.readTextFile(v1.cert))), 1);
    } finally {
      await pki.close();
    }
  },
});

Deno.test("x509Version reads the optional version field and refuses what is not DER", () => {
  // SEQUENCE { SEQUENCE { INTEGER 0 } }: no [0] version, so v1.
  assert.equal(x509Version(Uint8Array.of(0x30, 0x05, 0x30, 0x03, 0x02, 0x01, 0x00)), 1);
  // SEQUENCE { SEQUENCE { [0] { INTEGER 1 }, ... } }: v2; a long-form length.
  assert.equal(
    x509Version(Uint8Array.of(0x30, 0x81, 0x08, 0x30, 0x06, 0xa0, 0x03, 0x02, 0x01, 0x01, 0x00)),
    2,
  );
  const refused: number[][] = [
    [],
    [0x31, 0x00],
    [0x30, 0x80, 0x00, 0x00], // indefinite length
    [0x30, 0x05, 0x30, 0x03], // truncated
    [0x30, 0x85, 1, 0, 0, 0, 0], // a length past 4 bytes
    [0x30, 0x07, 0x30, 0x05, 0xa0, 0x03, 0x02, 0x01, 0x07], // version 8
    [0x30, 0x08, 0x30, 0x06, 0xa0, 0x04, 0x02, 0x02, 0x00, 0x02], // two-byte version
  ];
  for (const bytes of refused) {
    assert.throws(() => x509Version(Uint8Array.from(bytes)), /^Error: not an X\.509 certificate/);
  }
});

/** A self-signed ECDSA P-256 certificate (fuzz.test): the fuzzer's seed, no tools needed. */
const SEED_PEM = `-----BEGIN CERTIFICATE-----
MIIBlDCCATmgAwIBAgIUXzp2lnZNZG7u2G09EbRu8uq+ft0wCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJZnV6ei50ZXN0MB4XDTI2MTIwMTE0MzkxNFoXDTM2MTEyODE0
MzkxNFowFDESMBAGA1UEAwwJZnV6ei50ZXN0MFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAEgopIXn2wRyu+pNS7G/ZYamDbG2I+WJtAhom1dS6TIrUSOxhzFntYDnNw
humJuBg0hDlllafLJfzXJ4whTHPHzKNpMGcwHQYDVR0OBBYEFNyuI1qzVYTa2hsq
bmcvAcI8pOZAMB8GA1UdIwQYMBaAFNyuI1qzVYTa2hsqbmcvAcI8pOZAMA8GA1Ud
EwEB/wQFMAMBAf8wFAYDVR0RBA0wC4IJZnV6ei50ZXN0MAoGCCqGSM49BAMCA0kA
MEYCIQDydwT6zuNQgXlVUs/dUALlkPQ1gHH5Hs6XEnMlES4bfwIhANMwbBLvQslj
vZWp0ONkSFn2Q/IkZkiSEjPL2dgdtFJ/
-----END CERTIFICATE-----`;

Deno.test("x509Version: mutated and cut certificates give a version or its own error", () => {
  const base = der(SEED_PEM);
  assert.equal(x509Version(base), 3);
  const random = seeded(509);
  const cases = Number(Deno.env.get("SCALWS_FUZZ_CASES") ?? 3000);
  for (let i = 0; i < cases; i++) {
    const bytes = base.slice(0, Math.floor(random() * (base.length + 1)));
    const flips = Math.floor(random() * 4);
    for (let f = 0; f < flips && bytes.length > 0; f++) {
      // Mostly the first bytes: the headers this reads.
      const at = Math.floor(random() * Math.min(bytes.length, random() < 0.8 ? 16 : bytes.length));
      bytes[at] = Math.floor(random() * 256);
    }
    try {
      const v = x509Version(bytes);
      assert.ok(v === 1 || v === 2 || v === 3, `case ${i}`);
    } catch (err) {
      assert.match(String(err), /^Error: not an X\.509 certificate: /, `case ${i}`);
    }
  }
});
