/**
 * Reads the server name (SNI, RFC 6066 section 3) from the first bytes of a TLS connection: the
 * ClientHello, which may span several handshake records (RFC 8446 section 5.1). The reader
 * only routes the connection to a certificate; the TLS library that terminates it checks
 * everything again, so anything not understood here is "no name" rather than an error.
 */

/** A ClientHello larger than this (bytes of the handshake message) is not read further. */
export const MAX_CLIENT_HELLO = 32 * 1024;

/** Bytes still missing: read more and call again. */
export const NEED_MORE = 0;
/** The ClientHello was read: `name` holds the SNI host name ("" when absent). */
export const FOUND = 1;
/** Not a TLS ClientHello, malformed, or over `MAX_CLIENT_HELLO`: route it without a name. */
export const NOT_HELLO = 2;

/** What `readClientHello` found; one object reused by a caller. */
export class HelloResult {
  state = NEED_MORE;
  /** Lower-case host name from the SNI extension; "" when the client sent none. */
  name = "";
  /** Why the bytes are `NOT_HELLO`, for the log. */
  reason = "";
  /** legacy_session_id (a copy; empty for none): a TLS 1.2 server echoes it to resume. */
  sessionId: Uint8Array = NO_SESSION;
  /**
   * What the client offers that decides which key can serve it (`OFFERS_*` bits): signature
   * schemes, TLS 1.3, the TLS 1.2 cipher suites of each key type. 0 when not read.
   */
  offers = 0;
}

/** `signature_algorithms` was sent: the other `SIG_*` bits are what it lists. */
export const OFFERS_SIGS = 1;
/** ecdsa_secp256r1_sha256 (0x0403). */
export const SIG_P256 = 2;
/** ecdsa_secp384r1_sha384 (0x0503). */
export const SIG_P384 = 4;
/** ecdsa_secp521r1_sha512 (0x0603). */
export const SIG_P521 = 8;
/** ed25519 (0x0807). */
export const SIG_ED25519 = 16;
/** rsa_pss_rsae_sha256/384/512 (0x0804-0x0806): RSA keys under TLS 1.3 and 1.2. */
export const SIG_RSA_PSS = 32;
/** rsa_pkcs1_sha256/384/512 (0x0401, 0x0501, 0x0601): RSA keys under TLS 1.2 only. */
export const SIG_RSA_PKCS1 = 64;
/** `supported_versions` lists TLS 1.3. */
export const OFFERS_TLS13 = 128;
/** A TLS 1.2 ECDHE_ECDSA suite rustls has (AES-GCM, ChaCha20): ECDSA and Ed25519 keys. */
export const SUITE_ECDSA12 = 256;
/** A TLS 1.2 ECDHE_RSA suite rustls has (AES-GCM, ChaCha20): RSA keys. */
export const SUITE_RSA12 = 512;
/** TLS_FALLBACK_SCSV (0x5600, RFC 7507): the client retries with a lower version than it can. */
export const FALLBACK_SCSV = 1024;

const NO_SESSION = new Uint8Array(0);

const HANDSHAKE_RECORD = 22;
const CLIENT_HELLO = 1;
const SERVER_NAME = 0;
const SIGNATURE_ALGORITHMS = 13;
const SUPPORTED_VERSIONS = 43;
const HOST_NAME = 0;
const MAX_RECORD = 16384 + 256;

function notHello(out: HelloResult, reason: string): HelloResult {
  out.state = NOT_HELLO;
  out.name = "";
  out.reason = reason;
  return out;
}

/**
 * Looks for a complete ClientHello in `buf[0, len)` (everything received so far) and its SNI
 * name. Pure and allocation-free except for the name; safe to call again with more bytes.
 */
export function readClientHello(buf: Uint8Array, len: number, out: HelloResult): HelloResult {
  // Pass 1: the handshake message's length, from the first record's first four payload bytes.
  let off = 0;
  let msgLen = -1;
  let have = 0; // handshake bytes available in complete records
  while (off + 5 <= len) {
    if (buf[off] !== HANDSHAKE_RECORD) return notHello(out, "not a TLS handshake record");
    if (buf[off + 1] !== 3) return notHello(out, "unknown record version");
    const recLen = (buf[off + 3] << 8) | buf[off + 4];
    if (recLen === 0 || recLen > MAX_RECORD) return notHello(out, "bad record length");
    if (off + 5 + recLen > len) break;
    if (msgLen < 0) {
      if (buf[off + 5] !== CLIENT_HELLO) return notHello(out, "first message is no ClientHello");
      if (recLen < 4) {
        // A message header split across records: rare enough to need the slow path.
        return readSplitHeader(buf, len, out);
      }
      msgLen = (buf[off + 6] << 16) | (buf[off + 7] << 8) | buf[off + 8];
      if (msgLen > MAX_CLIENT_HELLO) return notHello(out, "ClientHello too large");
    }
    have += recLen;
    off += 5 + recLen;
    if (have >= msgLen + 4) break;
  }
  if (msgLen < 0 || have < msgLen + 4) {
    out.state = NEED_MORE;
    return out;
  }
  // Pass 2: gather the message when records split it; usually it sits in one record.
  let msg: Uint8Array;
  if ((buf[3] << 8 | buf[4]) >= msgLen + 4) msg = buf.subarray(9, 9 + msgLen);
  else msg = gather(buf, len, msgLen + 4).subarray(4);
  return parseHello(msg, out);
}

/** Joins the payloads of the handshake records in `buf` up to `want` bytes. */
function gather(buf: Uint8Array, len: number, want: number): Uint8Array {
  const msg = new Uint8Array(want);
  let off = 0;
  let got = 0;
  while (got < want && off + 5 <= len) {
    const recLen = (buf[off + 3] << 8) | buf[off + 4];
    const take = Math.min(recLen, want - got);
    msg.set(buf.subarray(off + 5, off + 5 + take), got);
    got += take;
    off += 5 + recLen;
  }
  return msg;
}

/** The message header itself is split across records: join what is there, then parse. */
function readSplitHeader(buf: Uint8Array, len: number, out: HelloResult): HelloResult {
  let off = 0;
  let have = 0;
  while (off + 5 <= len) {
    if (buf[off] !== HANDSHAKE_RECORD) return notHello(out, "not a TLS handshake record");
    const recLen = (buf[off + 3] << 8) | buf[off + 4];
    if (recLen === 0 || recLen > MAX_RECORD) return notHello(out, "bad record length");
    if (off + 5 + recLen > len) break;
    have += recLen;
    off += 5 + recLen;
  }
  if (have < 4) {
    out.state = NEED_MORE;
    return out;
  }
  const head = gather(buf, len, 4);
  const msgLen = (head[1] << 16) | (head[2] << 8) | head[3];
  if (msgLen > MAX_CLIENT_HELLO) return notHello(out, "ClientHello too large");
  if (have < msgLen + 4) {
    out.state = NEED_MORE;
    return out;
  }
  return parseHello(gather(buf, len, msgLen + 4).subarray(4), out);
}

/**
 * Parses a ClientHello body (RFC 8446 section 4.1.2): its server_name extension, and what it
 * offers for choosing a certificate (`offers`).
 */
function parseHello(m: Uint8Array, out: HelloResult): HelloResult {
  const n = m.length;
  let p = 2 + 32; // legacy_version, random
  if (p + 1 > n) return notHello(out, "truncated ClientHello");
  const idLen = m[p];
  if (p + 1 + idLen > n) return notHello(out, "truncated ClientHello");
  out.sessionId = idLen === 0 ? NO_SESSION : m.slice(p + 1, p + 1 + idLen);
  p += 1 + idLen; // legacy_session_id
  if (p + 2 > n) return notHello(out, "truncated ClientHello");
  const suitesEnd = p + 2 + ((m[p] << 8) | m[p + 1]);
  if (suitesEnd > n) return notHello(out, "truncated ClientHello");
  let offers = suites(m, p + 2, suitesEnd);
  p = suitesEnd;
  if (p + 1 > n) return notHello(out, "truncated ClientHello");
  p += 1 + m[p]; // legacy_compression_methods
  out.name = "";
  out.offers = offers;
  if (p === n) {
    out.state = FOUND; // no extensions at all
    return out;
  }
  if (p + 2 > n) return notHello(out, "truncated ClientHello");
  const extEnd = p + 2 + ((m[p] << 8) | m[p + 1]);
  if (extEnd !== n) return notHello(out, "bad extensions length");
  p += 2;
  while (p + 4 <= extEnd) {
    const type = (m[p] << 8) | m[p + 1];
    const extLen = (m[p + 2] << 8) | m[p + 3];
    p += 4;
    if (p + extLen > extEnd) return notHello(out, "bad extension length");
    if (type === SERVER_NAME) {
      if (serverName(m.subarray(p, p + extLen), out).state === NOT_HELLO) return out;
    } else if (type === SIGNATURE_ALGORITHMS) offers |= signatureSchemes(m, p, p + extLen);
    else if (type === SUPPORTED_VERSIONS) offers |= versions(m, p, p + extLen);
    p += extLen;
  }
  if (p !== extEnd) return notHello(out, "bad extensions length");
  out.offers = offers;
  out.state = FOUND;
  return out;
}

/** The `SUITE_*` bits of the cipher suites in `m[from, to)`. */
function suites(m: Uint8Array, from: number, to: number): number {
  let bits = 0;
  for (let i = from; i + 1 < to; i += 2) {
    const s = (m[i] << 8) | m[i + 1];
    if (s === 0xc02b || s === 0xc02c || s === 0xcca9) bits |= SUITE_ECDSA12;
    else if (s === 0xc02f || s === 0xc030 || s === 0xcca8) bits |= SUITE_RSA12;
    else if (s === 0x5600) bits |= FALLBACK_SCSV;
  }
  return bits;
}

/** The `SIG_*` bits of a signature_algorithms extension in `m[from, to)` (with `OFFERS_SIGS`). */
function signatureSchemes(m: Uint8Array, from: number, to: number): number {
  let bits = OFFERS_SIGS;
  const end = Math.min(to, from + 2 + ((m[from] << 8) | m[from + 1]));
  for (let i = from + 2; i + 1 < end; i += 2) {
    switch ((m[i] << 8) | m[i + 1]) {
      case 0x0403:
        bits |= SIG_P256;
        break;
      case 0x0503:
        bits |= SIG_P384;
        break;
      case 0x0603:
        bits |= SIG_P521;
        break;
      case 0x0807:
        bits |= SIG_ED25519;
        break;
      case 0x0804:
      case 0x0805:
      case 0x0806:
        bits |= SIG_RSA_PSS;
        break;
      case 0x0401:
      case 0x0501:
      case 0x0601:
        bits |= SIG_RSA_PKCS1;
        break;
    }
  }
  return bits;
}

/** `OFFERS_TLS13` when the supported_versions extension in `m[from, to)` lists TLS 1.3. */
function versions(m: Uint8Array, from: number, to: number): number {
  const end = Math.min(to, from + 1 + m[from]);
  for (let i = from + 1; i + 1 < end; i += 2) {
    if (m[i] === 3 && m[i + 1] === 4) return OFFERS_TLS13;
  }
  return 0;
}

/** The server_name extension: a list whose host_name entry is the name. */
function serverName(e: Uint8Array, out: HelloResult): HelloResult {
  if (e.length < 2 || ((e[0] << 8) | e[1]) !== e.length - 2) {
    return notHello(out, "bad server_name list");
  }
  let p = 2;
  while (p + 3 <= e.length) {
    const type = e[p];
    const len = (e[p + 1] << 8) | e[p + 2];
    p += 3;
    if (p + len > e.length) return notHello(out, "bad server_name entry");
    if (type === HOST_NAME) {
      if (len === 0 || len > 255) return notHello(out, "bad host_name");
      let name = "";
      for (let i = p; i < p + len; i++) {
        let c = e[i];
        // Only the characters of DNS names; anything else the TLS library refuses anyway.
        if (c >= 0x41 && c <= 0x5a) c += 0x20;
        else if (
          !((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e ||
            c === 0x5f)
        ) {
          return notHello(out, "bad host_name");
        }
        name += String.fromCharCode(c);
      }
      out.state = FOUND;
      out.name = name;
      return out;
    }
    p += len;
  }
  return notHello(out, "server_name without host_name");
}
