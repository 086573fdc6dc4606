/**
 * A PKCS#10 certificate request (RFC 2986) in DER, as ACME's finalize takes it: subject CN the
 * first domain, every domain as a DNS subject alternative name in an extensionRequest
 * attribute, signed ecdsa-with-SHA256 by the certificate key.
 */
import type { CertificateKey } from "./cert_key.ts";
import { signP256 } from "./cert_key.ts";
import {
  bitString,
  ecdsaSignature,
  implicitConstructed,
  implicitPrimitive,
  integer,
  octetString,
  oid,
  sequence,
  set,
  utf8String,
} from "./der.ts";

export const OID_COMMON_NAME = "2.5.4.3";
export const OID_SUBJECT_ALT_NAME = "2.5.29.17";
export const OID_EXTENSION_REQUEST = "1.2.840.113549.1.9.14";
export const OID_ECDSA_SHA256 = "1.2.840.10045.4.3.2";

/** Name ::= SEQUENCE OF RDN with one CN. */
export function commonName(cn: string): Uint8Array {
  return sequence(set(sequence(oid(OID_COMMON_NAME), utf8String(cn))));
}

/** The subjectAltName extension: dNSName ([2] IA5String) for each name. */
export function subjectAltName(domains: readonly string[]): Uint8Array {
  const names = domains.map((d) => {
    if (!/^[\x21-\x7e]+$/.test(d)) throw new RangeError(`domain "${d}" is not IA5 text`);
    return implicitPrimitive(2, new TextEncoder().encode(d));
  });
  return sequence(oid(OID_SUBJECT_ALT_NAME), octetString(sequence(...names)));
}

/** AlgorithmIdentifier of ecdsa-with-SHA256 (no parameters, RFC 5758). */
export function ecdsaSha256(): Uint8Array {
  return sequence(oid(OID_ECDSA_SHA256));
}

/** The DER certificate request for `domains` (at least one), signed with `key`. */
export async function buildCsr(
  domains: readonly string[],
  key: CertificateKey,
): Promise<Uint8Array> {
  if (domains.length === 0) throw new RangeError("a certificate request needs a domain");
  const extensions = sequence(subjectAltName(domains));
  const attributes = implicitConstructed(0, [
    sequence(oid(OID_EXTENSION_REQUEST), set(extensions)),
  ]);
  const info = sequence(integer(0), commonName(domains[0]), key.spki, attributes);
  const sig = await signP256(key.privateKey, info);
  return sequence(info, ecdsaSha256(), bitString(ecdsaSignature(sig)));
}
