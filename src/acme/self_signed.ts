/**
 * A self-signed X.509 v3 certificate for `domains`: what a TLS listener with `acme` and no
 * other certificate presents until its first certificate is issued (clients see an untrusted
 * certificate rather than a refused connection, as with Caddy's and Traefik's defaults).
 */
import { type CertificateKey, generateCertificateKey, signP256 } from "./cert_key.ts";
import { commonName, ecdsaSha256, subjectAltName } from "./csr.ts";
import { bitString, ecdsaSignature, explicit, integer, pem, sequence, time } from "./der.ts";

export interface SelfSigned {
  /** PEM certificate. */
  readonly cert: string;
  /** PEM PKCS#8 private key. */
  readonly key: string;
}

/** A certificate for `domains` valid from `now` - 1 h for `days` days (default 7). */
export async function selfSigned(
  domains: readonly string[],
  now: number,
  days = 7,
  key?: CertificateKey,
): Promise<SelfSigned> {
  const k = key ?? await generateCertificateKey();
  const serial = crypto.getRandomValues(new Uint8Array(16));
  serial[0] &= 0x7f;
  const name = commonName(domains[0] ?? "scalwsd");
  const tbs = sequence(
    explicit(0, integer(2)), // v3
    integer(serial),
    ecdsaSha256(),
    name,
    sequence(time(now - 3_600_000), time(now + days * 86_400_000)),
    name,
    k.spki,
    explicit(3, sequence(subjectAltName(domains))),
  );
  const sig = await signP256(k.privateKey, tbs);
  const der = sequence(tbs, ecdsaSha256(), bitString(ecdsaSignature(sig)));
  return { cert: pem("CERTIFICATE", der), key: k.pem };
}
