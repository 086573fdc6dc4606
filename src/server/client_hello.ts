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
}

const NO_SESSION = new Uint8Array(0);

const HANDSHAKE_RECORD = 22;
const CLIENT_HELLO = 1;
const SERVER_NAME = 0;
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

/** Parses a ClientHello body (RFC 8446 section 4.1.2) for its server_name extension. */
function parseHello(m: Uint8Array, out: HelloResult): HelloResult {
  const n = m.length;
  let p = 2 + 32; // legacy_version, random
  if (p + 1 > n) return notHello(out, "truncated ClientHello");
  const idLen = m[p];
  if (p + 1 + idLen > n) return notHello(out, "truncated ClientHello");
  out.sessionId = idLen === 0 ? NO_SESSION : m.slice(p + 1, p + 1 + idLen);
  p += 1 + idLen; // legacy_session_id
  if (p + 2 > n) return notHello(out, "truncated ClientHello");
  p += 2 + ((m[p] << 8) | m[p + 1]); // cipher_suites
  if (p + 1 > n) return notHello(out, "truncated ClientHello");
  p += 1 + m[p]; // legacy_compression_methods
  out.name = "";
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
    if (type === SERVER_NAME) return serverName(m.subarray(p, p + extLen), out);
    p += extLen;
  }
  if (p !== extEnd) return notHello(out, "bad extensions length");
  out.state = FOUND;
  return out;
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
