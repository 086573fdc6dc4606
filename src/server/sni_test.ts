import assert from "node:assert/strict";
import type { KeyKind, LoadedCertificate } from "../config/mod.ts";
import {
  OFFERS_SIGS,
  OFFERS_TLS13,
  SIG_ED25519,
  SIG_P256,
  SIG_P384,
  SIG_RSA_PKCS1,
  SIG_RSA_PSS,
  SUITE_ECDSA12,
  SUITE_RSA12,
} from "./client_hello.ts";
import { CertificateSet, usable } from "./sni.ts";

function cert(id: string, names: string[], kind: KeyKind = "ecdsa-p256"): LoadedCertificate {
  return { cert: `cert ${id}`, key: `key ${id}`, names, notAfter: 0, kind };
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

/** A TLS 1.3 client (with 1.2 suites of both kinds) offering the signature schemes `sigs`. */
const tls13 = (sigs: number) => OFFERS_SIGS | OFFERS_TLS13 | SUITE_ECDSA12 | SUITE_RSA12 | sigs;
const ECDSA_ONLY = tls13(SIG_P256 | SIG_P384);
const RSA_ONLY = tls13(SIG_RSA_PSS | SIG_RSA_PKCS1);
const BOTH = tls13(SIG_P256 | SIG_RSA_PSS | SIG_RSA_PKCS1);

Deno.test("usable: the key's own schemes, PSS for RSA under TLS 1.3, and TLS 1.2's suites", () => {
  assert.equal(usable("ecdsa-p256", ECDSA_ONLY), true);
  assert.equal(usable("ecdsa-p256", RSA_ONLY), false);
  assert.equal(usable("ecdsa-p384", tls13(SIG_P256)), false, "a curve signs in its own scheme");
  assert.equal(usable("rsa", RSA_ONLY), true);
  assert.equal(usable("rsa", tls13(SIG_RSA_PKCS1)), false, "TLS 1.3 signs RSA with PSS only");
  assert.equal(usable("rsa", OFFERS_SIGS | SIG_RSA_PKCS1 | SUITE_RSA12), true, "TLS 1.2");
  assert.equal(usable("rsa", OFFERS_SIGS | SIG_RSA_PKCS1 | SUITE_ECDSA12), false, "no RSA suite");
  assert.equal(usable("ecdsa-p256", OFFERS_SIGS | SIG_P256 | SUITE_RSA12), false);
  assert.equal(usable("ed25519", tls13(SIG_ED25519)), true);
  assert.equal(usable("rsa", 0), true, "nothing known: anything may do");
  assert.equal(usable("rsa", SUITE_ECDSA12), true, "no signature_algorithms");
});

Deno.test("CertificateSet keeps an RSA and an ECDSA certificate for one name and picks by the client", () => {
  const set = new CertificateSet([
    cert("rsa", ["a.test", "www.a.test"], "rsa"),
    cert("ec", ["a.test", "www.a.test"]),
    cert("ec late", ["a.test"], "ecdsa-p384"),
    cert("wild rsa", ["*.w.test"], "rsa"),
    cert("exact rsa", ["x.w.test"], "rsa"),
    cert("wild ec", ["*.w.test"]),
  ]);
  assert.equal(set.select("a.test", BOTH).cert, "cert ec", "ECDSA preferred when offered");
  assert.equal(set.select("a.test", ECDSA_ONLY).cert, "cert ec");
  assert.equal(set.select("a.test", RSA_ONLY).cert, "cert rsa");
  assert.equal(set.select("a.test", 0).cert, "cert rsa", "nothing known: the first");
  assert.equal(set.select("a.test", tls13(SIG_ED25519)).cert, "cert rsa", "none fits: the first");
  assert.equal(set.select("", ECDSA_ONLY).cert, "cert ec", "no SNI: the first or its twin");
  assert.equal(set.select("unknown.test", ECDSA_ONLY).cert, "cert ec");
  assert.equal(set.select("unknown.test", RSA_ONLY).cert, "cert rsa");
  assert.equal(set.select("y.w.test", ECDSA_ONLY).cert, "cert wild ec");
  assert.equal(set.select("y.w.test", RSA_ONLY).cert, "cert wild rsa");
  assert.equal(set.select("x.w.test", RSA_ONLY).cert, "cert exact rsa");
  assert.equal(set.select("x.w.test", ECDSA_ONLY).cert, "cert wild ec", "the exact one cannot");
  assert.equal(set.serves("a.test", "www.a.test", ECDSA_ONLY), true);
  assert.equal(set.serves("x.w.test", "z.w.test", RSA_ONLY), false, "the exact certificate's");
  assert.equal(set.serves("x.w.test", "z.w.test", ECDSA_ONLY), true, "the wildcard's");
  assert.equal(set.knows("a.test"), true);
  assert.equal(set.knows("q.w.test"), true);
  assert.equal(set.knows("b.test"), false);
  assert.equal(set.knows(""), false);
});
