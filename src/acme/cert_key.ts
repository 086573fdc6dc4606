/**
 * The key of a certificate: a new ECDSA P-256 pair per order (never the account key), kept as
 * WebCrypto keys for signing the request and as PKCS#8 PEM for the TLS listener.
 */
import { pem } from "./der.ts";

const ALG = { name: "ECDSA", namedCurve: "P-256" } as const;

export interface CertificateKey {
  readonly privateKey: CryptoKey;
  /** DER SubjectPublicKeyInfo, as a request or certificate embeds it. */
  readonly spki: Uint8Array;
  /** PEM `PRIVATE KEY` (PKCS#8), what the TLS listener loads. */
  readonly pem: string;
}

/** A new P-256 certificate key. */
export async function generateCertificateKey(): Promise<CertificateKey> {
  const pair = await crypto.subtle.generateKey(ALG, true, ["sign", "verify"]);
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", pair.publicKey));
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  return { privateKey: pair.privateKey, spki, pem: pem("PRIVATE KEY", pkcs8) };
}

/** ECDSA with SHA-256 over `data`: the raw r || s WebCrypto returns. */
export async function signP256(key: CryptoKey, data: Uint8Array): Promise<Uint8Array> {
  const sig = await crypto.subtle.sign(
    { name: "ECDSA", hash: "SHA-256" },
    key,
    data as Uint8Array<ArrayBuffer>,
  );
  return new Uint8Array(sig);
}
