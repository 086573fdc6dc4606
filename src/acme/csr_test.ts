import assert from "node:assert/strict";
import { generateCertificateKey } from "./cert_key.ts";
import { buildCsr } from "./csr.ts";
import { pem } from "./der.ts";

async function openssl(args: string[], input: string): Promise<{ ok: boolean; out: string }> {
  const p = new Deno.Command("openssl", {
    args,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = p.stdin.getWriter();
  await w.write(new TextEncoder().encode(input));
  await w.close();
  const o = await p.output();
  const dec = new TextDecoder();
  return { ok: o.success, out: dec.decode(o.stdout) + dec.decode(o.stderr) };
}

Deno.test("buildCsr: openssl verifies the signature and reads CN and every DNS name", async () => {
  const key = await generateCertificateKey();
  const der = await buildCsr(["a.test", "www.a.test"], key);
  const r = await openssl(["req", "-noout", "-verify", "-text"], pem("CERTIFICATE REQUEST", der));
  assert.equal(r.ok, true, r.out);
  assert.match(r.out, /verify OK/i);
  assert.match(r.out, /Subject: CN\s*=\s*a\.test/);
  assert.match(r.out, /DNS:a\.test, DNS:www\.a\.test/);
  assert.match(r.out, /ecdsa-with-SHA256/);
  assert.match(r.out, /prime256v1|P-256/);
});

Deno.test("buildCsr: a changed byte fails openssl's verification", async () => {
  const key = await generateCertificateKey();
  const der = await buildCsr(["b.test"], key);
  // The CN's last letter sits inside the signed request info.
  const at = der.lastIndexOf("t".charCodeAt(0), 60);
  der[at] = "x".charCodeAt(0);
  const r = await openssl(["req", "-noout", "-verify"], pem("CERTIFICATE REQUEST", der));
  assert.doesNotMatch(r.out, /verify OK/i);
});

Deno.test("buildCsr: refuses no domains and names that are not IA5 text", async () => {
  const key = await generateCertificateKey();
  await assert.rejects(buildCsr([], key), RangeError);
  await assert.rejects(buildCsr(["bad name"], key), RangeError);
});
