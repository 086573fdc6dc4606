/**
 * What the server's first flight says of a TLS session, read from the bytes the relay
 * (tls_relay.ts) passes to the client: the protocol version, the cipher suite and whether the
 * session was resumed. Deno 2.9.6 reports none of them (its handshake information is the ALPN
 * protocol only). Not a validator: the TLS library on both ends checks the bytes; anything not a
 * plain ServerHello in the first record gives null.
 */

/** The TLS session of one connection, as the access log writes it. */
export interface TlsSession {
  /** `TLSv1.2` or `TLSv1.3`. */
  readonly version: string;
  /** The IANA name of the cipher suite (`TLS_AES_128_GCM_SHA256`), or `0xC0FF` when unknown. */
  readonly cipher: string;
  readonly resumed: boolean;
}

const HANDSHAKE_RECORD = 22;
const SERVER_HELLO = 2;
const SUPPORTED_VERSIONS = 43;
const PRE_SHARED_KEY = 41;
/** The random of a HelloRetryRequest (RFC 8446 4.1.3): SHA-256 of "HelloRetryRequest". */
const HRR_RANDOM_START = [0xcf, 0x21, 0xad, 0x74];

/** The cipher suites rustls offers, by IANA number. */
const CIPHERS: Record<number, string> = {
  0x1301: "TLS_AES_128_GCM_SHA256",
  0x1302: "TLS_AES_256_GCM_SHA384",
  0x1303: "TLS_CHACHA20_POLY1305_SHA256",
  0xc02b: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
  0xc02c: "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
  0xcca9: "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
  0xc02f: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
  0xc030: "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
  0xcca8: "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
};

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The session the ServerHello at the start of `buf` (the server's first bytes) announces;
 * `clientSessionId` is the ClientHello's legacy_session_id (TLS 1.2 resumes by echoing it). Null
 * when the first record does not hold a whole ServerHello, or for a HelloRetryRequest.
 */
export function readServerHello(buf: Uint8Array, clientSessionId: Uint8Array): TlsSession | null {
  if (buf.length < 9 || buf[0] !== HANDSHAKE_RECORD) return null;
  const recLen = (buf[3] << 8) | buf[4];
  if (buf.length < 5 + recLen || buf[5] !== SERVER_HELLO) return null;
  const msgLen = (buf[6] << 16) | (buf[7] << 8) | buf[8];
  if (msgLen + 4 > recLen) return null;
  const m = buf.subarray(9, 9 + msgLen);
  let p = 2; // legacy_version
  if (p + 32 > m.length) return null;
  if (HRR_RANDOM_START.every((b, i) => m[p + i] === b)) return null;
  p += 32;
  if (p + 1 > m.length) return null;
  const idLen = m[p];
  if (p + 1 + idLen + 3 > m.length) return null;
  const sessionId = m.subarray(p + 1, p + 1 + idLen);
  p += 1 + idLen;
  const suite = (m[p] << 8) | m[p + 1];
  p += 3; // cipher_suite, legacy_compression_method
  let tls13 = false;
  let psk = false;
  if (p + 2 <= m.length) {
    const end = Math.min(m.length, p + 2 + ((m[p] << 8) | m[p + 1]));
    p += 2;
    while (p + 4 <= end) {
      const type = (m[p] << 8) | m[p + 1];
      const len = (m[p + 2] << 8) | m[p + 3];
      p += 4;
      if (type === SUPPORTED_VERSIONS && len === 2 && m[p] === 3 && m[p + 1] === 4) tls13 = true;
      if (type === PRE_SHARED_KEY) psk = true;
      p += len;
    }
  }
  const cipher = CIPHERS[suite] ?? `0x${suite.toString(16).toUpperCase().padStart(4, "0")}`;
  if (tls13) return { version: "TLSv1.3", cipher, resumed: psk };
  const resumed = idLen > 0 && sameBytes(sessionId, clientSessionId);
  return { version: "TLSv1.2", cipher, resumed };
}
