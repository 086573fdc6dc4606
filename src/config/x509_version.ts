/**
 * The version of an X.509 certificate from its DER bytes: node:crypto's X509Certificate does not
 * say it, and rustls (webpki) refuses anything but v3 (`UnsupportedCertVersion`), which is what a
 * bare `openssl x509 -req` makes (v1, no extensions). Reads only the two outer SEQUENCE headers
 * and the optional `[0] EXPLICIT Version` of the TBSCertificate (RFC 5280, 4.1).
 */

/** Reads a DER length at `at`; returns [length, offset after it]; throws on what it refuses. */
function length(der: Uint8Array, at: number): [number, number] {
  if (at >= der.length) throw new Error("not an X.509 certificate: truncated");
  const first = der[at];
  if (first < 0x80) return [first, at + 1];
  const n = first & 0x7f;
  // Indefinite lengths are not DER; a certificate is far below 2^32 bytes.
  if (n === 0 || n > 4 || at + 1 + n > der.length) {
    throw new Error("not an X.509 certificate: bad length");
  }
  let len = 0;
  for (let i = 0; i < n; i++) len = len * 256 + der[at + 1 + i];
  return [len, at + 1 + n];
}

/** Reads a tag and its length at `at`; the content must lie within the bytes. */
function header(der: Uint8Array, at: number, tag: number): [number, number] {
  if (at >= der.length || der[at] !== tag) {
    throw new Error("not an X.509 certificate: unexpected tag");
  }
  const [len, body] = length(der, at + 1);
  if (body + len > der.length) throw new Error("not an X.509 certificate: truncated");
  return [len, body];
}

/** 1, 2 or 3; throws when the bytes do not start like an X.509 certificate. */
export function x509Version(der: Uint8Array): 1 | 2 | 3 {
  const [, tbsAt] = header(der, 0, 0x30); // Certificate ::= SEQUENCE
  const [tbsLen, fieldsAt] = header(der, tbsAt, 0x30); // TBSCertificate ::= SEQUENCE
  if (tbsLen === 0 || der[fieldsAt] !== 0xa0) return 1; // version absent: v1 (DEFAULT)
  const [vLen, intAt] = header(der, fieldsAt, 0xa0);
  const [iLen, valueAt] = header(der, intAt, 0x02); // Version ::= INTEGER
  if (vLen !== 2 + iLen || iLen !== 1 || der[valueAt] > 2) {
    throw new Error("not an X.509 certificate: bad version");
  }
  return (der[valueAt] + 1) as 1 | 2 | 3;
}
