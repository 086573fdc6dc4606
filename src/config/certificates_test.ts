import assert from "node:assert/strict";
import { issueV1, makePki } from "../base/_test_certs.ts";
import { createPrivateKey, generateKeyPairSync } from "node:crypto";
import { coveredBy, loadCertificate, loadCertificates, unusableKey } from "./certificates.ts";

const read = (p: string) => Deno.readTextFileSync(p);

Deno.test("coveredBy matches exact names and single-label wildcards", () => {
  const names = ["a.test", "*.b.test"];
  assert.equal(coveredBy("a.test", names), true);
  assert.equal(coveredBy("x.b.test", names), true);
  assert.equal(coveredBy("*.b.test", names), true);
  assert.equal(coveredBy("b.test", names), false);
  assert.equal(coveredBy("x.y.b.test", names), false);
  assert.equal(coveredBy("*.a.test", names), false);
});

Deno.test("loadCertificate reads a certificate, checks its key and takes its DNS names", async () => {
  const pki = await makePki();
  try {
    const a = await pki.issue("a", ["a.test", "*.a.test", "127.0.0.1"]);
    const b = await pki.issue("b", ["b.test"]);
    const errors: string[] = [];
    const warnings: string[] = [];
    const ok = loadCertificate({ cert: a.cert, key: a.key }, "c", read, errors, warnings);
    assert.deepEqual([errors, warnings], [[], []]);
    assert.deepEqual(ok?.names, ["a.test", "*.a.test"]);
    assert.equal(ok?.cert, read(a.cert));
    assert.equal(ok?.key, read(a.key));

    const listed = loadCertificate(
      { cert: a.cert, key: a.key, domains: ["x.a.test"] },
      "c",
      read,
      errors,
      warnings,
    );
    assert.deepEqual(listed?.names, ["x.a.test"]);

    // A chain: the leaf first, then its issuer.
    const chain = `${pki.dir}/chain.pem`;
    await Deno.writeTextFile(chain, read(a.cert) + read(pki.caFile));
    assert.notEqual(
      loadCertificate({ cert: chain, key: a.key }, "c", read, errors, warnings),
      undefined,
    );
    assert.deepEqual(errors, []);

    const later = Date.now() + 10 * 86_400_000;
    loadCertificate({ cert: a.cert, key: a.key }, "c", read, errors, warnings, later);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /^c\.cert: certificate expired on \d{4}-\d\d-\d\dT/);
    // Not valid yet: a warning too.
    warnings.length = 0;
    loadCertificate(
      { cert: a.cert, key: a.key },
      "c",
      read,
      errors,
      warnings,
      Date.now() - 86_400_000,
    );
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /^c\.cert: certificate not valid before \d{4}-\d\d-\d\dT/);
    warnings.length = 0;

    const junk = `${pki.dir}/junk.pem`;
    await Deno.writeTextFile(
      junk,
      "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    );
    // A certificate and its key encrypted with a passphrase, in one file; a chain in the
    // wrong order (the CA first).
    const encrypted = `${pki.dir}/encrypted.pem`;
    const pem = createPrivateKey(read(a.key)).export({
      type: "pkcs8",
      format: "pem",
      cipher: "aes-256-cbc",
      passphrase: "secret",
    }) as string;
    await Deno.writeTextFile(encrypted, read(a.cert) + pem);
    const caFirst = `${pki.dir}/ca-first.pem`;
    await Deno.writeTextFile(caFirst, read(pki.caFile) + read(a.cert));
    const cases: [Parameters<typeof loadCertificate>[0], string[]][] = [
      [{ cert: a.cert, key: b.key }, [`c.key: does not belong to the certificate in "${a.cert}"`]],
      [{ cert: junk, key: a.key }, [`c.cert: certificate 1 in "${junk}" does not parse`]],
      [{ cert: a.key, key: a.key }, [`c.cert: "${a.key}" holds no PEM certificate`]],
      [{ cert: a.cert, key: a.cert }, [`c.key: "${a.cert}" holds no valid PEM private key`]],
      [{ cert: encrypted, key: encrypted }, [
        `c.key: the private key in "${encrypted}" is encrypted: TLS listeners need it ` +
        "unencrypted (openssl pkey -in KEY -out PLAIN)",
      ]],
      [{ cert: caFirst, key: a.key }, [
        `c.cert: the certificate of the key in "${a.key}" is not the first in "${caFirst}": ` +
        "put the server's certificate first, then its chain",
      ]],
      [
        { cert: b.cert, key: b.key, domains: ["b.test", "*.b.test", "c.test"] },
        [
          'c.domains[1]: "*.b.test" is not a name of the certificate',
          'c.domains[2]: "c.test" is not a name of the certificate',
        ],
      ],
    ];
    for (const [entry, expected] of cases) {
      const errs: string[] = [];
      assert.equal(loadCertificate(entry, "c", read, errs, []), undefined);
      assert.deepEqual(errs, expected, JSON.stringify(entry));
    }
  } finally {
    await pki.close();
  }
});

Deno.test("loadCertificates refuses a domain listed by two certificates", async () => {
  const pki = await makePki();
  try {
    const a = await pki.issue("a", ["a.test", "b.test"]);
    const b = await pki.issue("b", ["b.test"]);
    const errors: string[] = [];
    const certs = loadCertificates(
      [{ cert: a.cert, key: a.key, domains: ["b.test"] }, {
        cert: b.cert,
        key: b.key,
        domains: ["b.test"],
      }],
      "server.listeners[0].tls",
      read,
      errors,
      [],
    );
    assert.equal(certs, undefined);
    assert.deepEqual(errors, [
      'server.listeners[0].tls.certificates[1].domains[0]: "b.test" is already listed by certificates[0]',
    ]);
    const both = loadCertificates(
      [{ cert: b.cert, key: b.key }, { cert: a.cert, key: a.key }],
      "t",
      read,
      [],
      [],
    );
    assert.deepEqual(both?.map((c) => c.names), [["b.test"], ["a.test", "b.test"]]);
  } finally {
    await pki.close();
  }
});

Deno.test("loadCertificates keeps an RSA and an ECDSA certificate for one name, not two of one type", async () => {
  const pki = await makePki();
  try {
    const ec = await pki.issue("ec", ["a.test", "b.test"]);
    const rsa = await pki.issue("rsa", ["a.test", "b.test"], { rsa: true });
    const ec2 = await pki.issue("ec2", ["b.test"]);
    const rsa2 = await pki.issue("rsa2", ["a.test", "c.test"], { rsa: true });
    const errors: string[] = [];
    const pair = loadCertificates([ec, rsa, rsa2], "t", read, errors, []);
    assert.deepEqual(errors, []);
    assert.deepEqual(pair?.map((c) => c.kind), ["ecdsa-p256", "rsa", "rsa"]);
    const dup = loadCertificates([rsa, ec, ec2], "server.listeners[0].tls", read, errors, []);
    assert.equal(dup, undefined);
    assert.deepEqual(errors, [
      `server.listeners[0].tls.certificates[2]: every name of "${ec2.cert}" (b.test) is already ` +
      `served by certificates[1] ("${ec.cert}") with an ECDSA key too: it would never be chosen`,
    ]);
    errors.length = 0;
    loadCertificates(
      [rsa2, { ...rsa, domains: ["b.test"] }, { ...rsa, domains: ["a.test"] }],
      "t",
      read,
      errors,
      [],
    );
    assert.deepEqual(errors, [
      `t.certificates[2]: every name of "${rsa.cert}" (a.test) is already served by ` +
      `certificates[0] ("${rsa2.cert}") with an RSA key too: it would never be chosen`,
    ]);
  } finally {
    await pki.close();
  }
});

Deno.test("loadCertificate refuses an X.509 v1 certificate and warns about one without names", async () => {
  const pki = await makePki();
  try {
    const v1 = await issueV1(pki, "v1", "v1.test");
    const errors: string[] = [];
    const warnings: string[] = [];
    const got = loadCertificate({ cert: v1.cert, key: v1.key }, "c", read, errors, warnings);
    assert.equal(got, undefined);
    assert.deepEqual(errors, [
      `c.cert: the certificate in "${v1.cert}" is X.509 v1: TLS listeners take X.509 v3 only ` +
      "(rustls); a bare `openssl x509 -req` makes v1, give it -extfile with subjectAltName=DNS:...",
    ]);
    // v3 without subject alternative names: served, with a warning.
    await Deno.writeTextFile(`${pki.dir}/bare.ext`, "basicConstraints=CA:FALSE\n");
    const run = async (args: string[]) => {
      const out = await new Deno.Command("openssl", { args, cwd: pki.dir, stderr: "piped" })
        .output();
      assert.ok(out.success, new TextDecoder().decode(out.stderr));
    };
    await run(["x509", "-req", "-in", "v1.csr", "-CA", "ca.crt", "-CAkey", "ca.key"].concat(
      ["-CAcreateserial", "-out", "bare.crt", "-days", "2", "-extfile", "bare.ext"],
    ));
    const bare = `${pki.dir}/bare.crt`;
    const ok = loadCertificate({ cert: bare, key: v1.key }, "c", read, [], warnings);
    assert.deepEqual(ok?.names, []);
    assert.deepEqual(warnings, [
      `c.cert: the certificate in "${bare}" has no subject alternative names; clients match ` +
      "names against them only",
    ]);
  } finally {
    await pki.close();
  }
});

Deno.test("unusableKey: RSA of 2048 bits or more, ECDSA P-256/P-384/P-521 and Ed25519 only", () => {
  const key = (type: string, options: Record<string, unknown> = {}) =>
    // deno-lint-ignore no-explicit-any
    (generateKeyPairSync as any)(type, options).privateKey;
  // RSA-2048 (slow to make here) is bench/configs_test.ts's certificate.
  assert.equal(unusableKey(key("ec", { namedCurve: "prime256v1" })), null);
  assert.equal(unusableKey(key("ec", { namedCurve: "secp384r1" })), null);
  assert.equal(unusableKey(key("ed25519")), null);
  assert.equal(
    unusableKey(key("rsa", { modulusLength: 1024 })),
    "an RSA key of 1024 bits (2048 or more are needed)",
  );
  assert.equal(
    unusableKey(key("ec", { namedCurve: "secp256k1" })),
    "an ECDSA key on secp256k1 (P-256, P-384 or P-521 are needed)",
  );
  assert.equal(
    unusableKey(key("x25519")),
    "a key of type x25519 (RSA, ECDSA or Ed25519 are needed)",
  );
});

Deno.test("loadCertificate refuses a key rustls cannot sign with (RSA-1024), naming the key", async () => {
  const pki = await makePki();
  try {
    const out = await new Deno.Command("openssl", {
      args: ["req", "-x509", "-newkey", "rsa:1024", "-nodes", "-keyout", "r.key", "-out", "r.crt"]
        .concat(["-days", "2", "-subj", "/CN=r.test", "-addext", "subjectAltName=DNS:r.test"]),
      cwd: pki.dir,
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const errors: string[] = [];
    const [cert, key] = [`${pki.dir}/r.crt`, `${pki.dir}/r.key`];
    assert.equal(loadCertificate({ cert, key }, "c", read, errors, []), undefined);
    assert.deepEqual(errors, [
      `c.key: "${key}" holds an RSA key of 1024 bits (2048 or more are needed): the TLS library ` +
      "refuses it",
    ]);
  } finally {
    await pki.close();
  }
});
