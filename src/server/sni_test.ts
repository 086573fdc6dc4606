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

Deno.test("CertificateSet.serves: the SNI name, or a name of the certificate it chose", () => {
  const set = new CertificateSet([
    cert("default", ["www.test"]),
    cert("ab", ["a.test", "b.test"]),
    cert("c", ["c.test", "*.w.test"]),
  ]);
  assert.equal(set.indexOf("b.test"), 1);
  assert.equal(set.indexOf("nothing.test"), 0);
  assert.equal(set.serves("a.test", "a.test"), true);
  assert.equal(set.serves("a.test", "b.test"), true, "same certificate");
  assert.equal(set.serves("a.test", "c.test"), false, "another certificate: 421");
  assert.equal(set.serves("c.test", "x.w.test"), true, "wildcard of the same certificate");
  assert.equal(set.serves("c.test", "y.x.w.test"), false, "a wildcard covers one label");
  assert.equal(set.serves("", "www.test"), true, "no SNI: the default certificate");
  assert.equal(set.serves("", "a.test"), false);
  assert.equal(set.serves("unknown.test", "www.test"), true, "unknown names get the default");
});
