import assert from "node:assert/strict";
import type { LoadedCertificate } from "../config/certificates.ts";
import { CertificateSet } from "./sni.ts";

function cert(id: string, names: string[]): LoadedCertificate {
  return { cert: `cert ${id}`, key: `key ${id}`, names, notAfter: 0 };
}

Deno.test("CertificateSet picks exact names, then single-label wildcards, then the first", () => {
  const set = new CertificateSet([
    cert("default", ["www.test"]),
    cert("wild", ["*.a.test"]),
    cert("exact", ["x.a.test", "a.test"]),
    cert("late", ["a.test"]),
  ]);
  assert.equal(set.select("x.a.test").cert, "cert exact");
  assert.equal(set.select("y.a.test").cert, "cert wild");
  assert.equal(set.select("A.TEST").cert, "cert exact", "the first certificate naming a host wins");
  assert.equal(set.select("z.y.a.test").cert, "cert default");
  assert.equal(set.select("").cert, "cert default", "no SNI");
  assert.equal(set.covers("y.a.test"), true);
  assert.equal(set.covers("www.test"), true);
  assert.equal(set.covers("other.test"), false);
  assert.equal(set.covers("z.y.a.test"), false);
});

Deno.test("CertificateSet fingerprints change with any certificate, key or name", () => {
  const base = new CertificateSet([cert("a", ["a.test"])]).fingerprint;
  assert.equal(new CertificateSet([cert("a", ["a.test"])]).fingerprint, base);
  assert.notEqual(new CertificateSet([cert("b", ["a.test"])]).fingerprint, base);
  assert.notEqual(new CertificateSet([cert("a", ["b.test"])]).fingerprint, base);
  assert.throws(() => new CertificateSet([]), /at least one certificate/);
});
