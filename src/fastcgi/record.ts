/**
 * FastCGI/1.0 records: the 8-byte header, written into a caller's buffer and read in place
 * from a connection's read buffer. Only what a Responder client sends and receives.
 */

export const FCGI_VERSION = 1;
export const HEADER_LEN = 8;
/** Largest content of one record. */
export const MAX_CONTENT = 65535;

export const BEGIN_REQUEST = 1;
export const ABORT_REQUEST = 2;
export const END_REQUEST = 3;
export const PARAMS = 4;
export const STDIN = 5;
export const STDOUT = 6;
export const STDERR = 7;
export const DATA = 8;
export const GET_VALUES = 9;
export const GET_VALUES_RESULT = 10;
export const UNKNOWN_TYPE = 11;

export const ROLE_RESPONDER = 1;
export const FLAG_KEEP_CONN = 1;

/** `protocolStatus` of END_REQUEST. */
export const REQUEST_COMPLETE = 0;
export const CANT_MPX_CONN = 1;
export const OVERLOADED = 2;
export const UNKNOWN_ROLE = 3;

/** The one request id this client uses: one request at a time per connection. */
export const REQUEST_ID = 1;

/** Writes a record header at `at`; returns the offset after it. */
export function writeHeader(
  buf: Uint8Array,
  at: number,
  type: number,
  contentLength: number,
  paddingLength = 0,
): number {
  buf[at] = FCGI_VERSION;
  buf[at + 1] = type;
  buf[at + 2] = 0;
  buf[at + 3] = REQUEST_ID;
  buf[at + 4] = contentLength >>> 8;
  buf[at + 5] = contentLength & 0xff;
  buf[at + 6] = paddingLength;
  buf[at + 7] = 0;
  return at + HEADER_LEN;
}

/** Writes BEGIN_REQUEST (Responder, FCGI_KEEP_CONN when `keepConn`) at `at`. */
export function writeBeginRequest(buf: Uint8Array, at: number, keepConn: boolean): number {
  at = writeHeader(buf, at, BEGIN_REQUEST, 8);
  buf[at] = 0;
  buf[at + 1] = ROLE_RESPONDER;
  buf[at + 2] = keepConn ? FLAG_KEEP_CONN : 0;
  buf.fill(0, at + 3, at + 8);
  return at + 8;
}

/** A record header read from a buffer. */
export interface RecordHeader {
  type: number;
  requestId: number;
  contentLength: number;
  paddingLength: number;
}

/** Why a record is refused; null when it is acceptable to a Responder client. */
export function recordError(h: RecordHeader, version: number): string | null {
  if (version !== FCGI_VERSION) return `unsupported FastCGI version ${version}`;
  if (h.type !== STDOUT && h.type !== STDERR && h.type !== END_REQUEST) {
    return `unexpected record type ${h.type}`;
  }
  if (h.requestId !== REQUEST_ID) return `record for unknown request id ${h.requestId}`;
  if (h.type === END_REQUEST && h.contentLength !== 8) {
    return `END_REQUEST with ${h.contentLength} content bytes`;
  }
  return null;
}

/**
 * Reads the header at `pos` into `out` when 8 bytes are there; returns the version byte, or
 * -1 when fewer than 8 bytes are available.
 */
export function readHeader(buf: Uint8Array, pos: number, end: number, out: RecordHeader): number {
  if (end - pos < HEADER_LEN) return -1;
  out.type = buf[pos + 1];
  out.requestId = (buf[pos + 2] << 8) | buf[pos + 3];
  out.contentLength = (buf[pos + 4] << 8) | buf[pos + 5];
  out.paddingLength = buf[pos + 6];
  return buf[pos];
}
