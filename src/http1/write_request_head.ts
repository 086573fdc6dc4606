/** The request head sent to a member: request line, client headers minus hop-by-hop, X-Forwarded-*. */

import type { HeadSource } from "./types.ts";

/** `framing` value: send no body framing at all. */
export const FRAMING_NONE = -1;
/** `framing` value: send `Transfer-Encoding: chunked`. */
export const FRAMING_CHUNKED = -2;

const encoder = new TextEncoder();

/** A growable byte buffer reused for every request head of one connection; starts at 4 KiB. */
export class HeadBuffer {
  buf: Uint8Array;

  /** A new buffer of `size` bytes, or the one given. */
  constructor(size: number | Uint8Array = 4096) {
    this.buf = typeof size === "number" ? new Uint8Array(size) : size;
  }

  /** Grows to hold at least `capacity` bytes, keeping the first `keep`. */
  ensure(capacity: number, keep = 0): void {
    if (capacity <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < capacity) size *= 2;
    const next = new Uint8Array(size);
    if (keep > 0) next.set(this.buf.subarray(0, keep));
    this.buf = next;
  }

  /** Writes `s` at offset 0, one byte per char up to U+00FF (latin1); returns the byte length. */
  encode(s: string): number {
    let r = encoder.encodeInto(s, this.buf);
    if (r.read < s.length) {
      this.ensure(s.length * 2 + 64);
      r = encoder.encodeInto(s, this.buf);
    }
    // All ASCII: UTF-8 and latin1 agree. Header values from `Headers` are byte strings, so
    // chars 0x80-0xFF stand for single bytes and need the slow path.
    if (r.read === s.length && r.written === s.length) return r.written;
    return this.#encodeBytes(s);
  }

  #encodeBytes(s: string): number {
    this.ensure(s.length * 3 + 64);
    const buf = this.buf;
    let at = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x100) {
        buf[at++] = c;
      } else {
        // Only a caller-built host or target can hold these; UTF-8 is the only sensible bytes.
        const r = encoder.encodeInto(s.slice(i, i + 2), buf.subarray(at));
        at += r.written;
        i += r.read - 1;
      }
    }
    return at;
  }
}

const H_DROP = 1;
const H_UPGRADE = 2;
const H_CONNECTION = 3;
const H_XFF = 4;
const H_XFP = 5;
const H_XFH = 6;
const H_TRACE = 7;

/** Client headers that are not copied as they are. */
const SPECIAL = new Map<string, number>([
  ["connection", H_CONNECTION],
  ["keep-alive", H_DROP],
  ["proxy-connection", H_DROP],
  ["te", H_DROP],
  ["trailer", H_DROP],
  ["transfer-encoding", H_DROP],
  ["upgrade", H_UPGRADE],
  // Written by the client itself.
  ["host", H_DROP],
  ["content-length", H_DROP],
  // scalwsd already answered the client's 100-continue and sends the body at once.
  ["expect", H_DROP],
  ["x-forwarded-for", H_XFF],
  ["x-forwarded-proto", H_XFP],
  ["x-forwarded-host", H_XFH],
  // Replaced by the attempt's own context when the request is traced.
  ["traceparent", H_TRACE],
  ["tracestate", H_TRACE],
]);

/** State of one pass over the client's headers; one instance, reused (the code is synchronous). */
class Pass {
  lines = "";
  upgrade = false;
  drop: Set<string> | null = null;
  xff: string | null = null;
  xfp: string | null = null;
  xfh: string | null = null;
  connection: string | null = null;
  /** The request id header's lower-case name: the client's own is not copied. */
  rid = "";
  /** The attempt sends its own trace context: the client's is not copied. */
  traced = false;
}

const pass = new Pass();

// `Headers.forEach` with a this-argument: about 6x cheaper than for-of over `Headers` in
// Deno 2.9 (0.7 us against 4-5 us for four headers, measured here) and needs no closure.
function collect(this: Pass, value: string, name: string): void {
  if (this.drop !== null && this.drop.has(name)) return;
  if (name === this.rid) return;
  const code = SPECIAL.get(name);
  if (code === undefined) {
    this.lines += name + ": " + value + "\r\n";
    return;
  }
  switch (code) {
    case H_UPGRADE:
      if (this.upgrade) this.lines += "upgrade: " + value + "\r\n";
      break;
    case H_CONNECTION:
      this.connection = this.connection === null ? value : this.connection + ", " + value;
      break;
    case H_XFF:
      this.xff = this.xff === null ? value : this.xff + ", " + value;
      break;
    case H_XFP:
      this.xfp = value;
      break;
    case H_XFH:
      this.xfh = value;
      break;
    case H_TRACE:
      if (!this.traced) this.lines += name + ": " + value + "\r\n";
      break;
  }
}

function headerLines(src: HeadSource, drop: Set<string> | null): string {
  const p = pass;
  p.lines = "";
  p.upgrade = src.upgrade;
  p.drop = drop;
  p.rid = src.requestIdLower ?? "";
  p.traced = src.traceparent !== undefined;
  p.xff =
    p.xfp =
    p.xfh =
    p.connection =
      null;
  src.headers.forEach(collect, p);
  const lines = p.lines;
  p.lines = "";
  p.drop = null;
  return lines;
}

/** Header names listed in a Connection value that the first pass did not already drop, or null. */
function connectionDrops(value: string): Set<string> | null {
  let drops: Set<string> | null = null;
  for (const raw of value.split(",")) {
    const token = raw.trim().toLowerCase();
    if (token === "" || token === "close") continue;
    const code = SPECIAL.get(token);
    if (code === H_DROP || code === H_CONNECTION || code === H_UPGRADE) continue;
    (drops ??= new Set()).add(token);
  }
  return drops;
}

/**
 * The framing the client writes for a body: `Content-Length` (>= 0), `FRAMING_CHUNKED` for a
 * stream of unknown length, or `FRAMING_NONE`. A bodiless POST, PUT or PATCH gets length 0.
 */
export function requestFraming(
  method: string,
  body: null | Uint8Array | object,
  bodyLength: number,
): number {
  if (body === null) {
    return method === "POST" || method === "PUT" || method === "PATCH" ? 0 : FRAMING_NONE;
  }
  if (body instanceof Uint8Array) return body.length;
  return bodyLength >= 0 ? bodyLength : FRAMING_CHUNKED;
}

/**
 * Writes `METHOD target HTTP/1.1`, `Host`, the client's headers except hop-by-hop ones and
 * those its Connection header names (Upgrade kept for WebSocket upgrades), X-Forwarded-For
 * (the trusted peer's list plus the peer, else the peer), X-Forwarded-Proto and -Host (the
 * trusted peer's values, else ours), then the framing header, into `out.buf` from offset 0.
 * Returns the head's length in bytes.
 */
export function buildRequestHead(
  out: HeadBuffer,
  method: string,
  target: string,
  src: HeadSource,
  framing: number,
): number {
  let lines = headerLines(src, null);
  if (pass.connection !== null) {
    const drops = connectionDrops(pass.connection);
    if (drops !== null) lines = headerLines(src, drops);
  }
  const seenXff = pass.xff, seenXfp = pass.xfp, seenXfh = pass.xfh;
  let s = method + " " + target + " HTTP/1.1\r\nHost: " + src.host + "\r\n" + lines;
  const trusted = src.peerTrusted;
  if (src.peer !== "") {
    s += "X-Forwarded-For: " + (trusted && seenXff !== null ? seenXff + ", " : "") + src.peer +
      "\r\n";
  } else if (trusted && seenXff !== null) {
    s += "X-Forwarded-For: " + seenXff + "\r\n";
  }
  s += "X-Forwarded-Proto: " + (trusted && seenXfp !== null ? seenXfp : src.proto) + "\r\n";
  const xfh = trusted && seenXfh !== null ? seenXfh : src.clientHost;
  if (xfh !== "") s += "X-Forwarded-Host: " + xfh + "\r\n";
  if (src.requestIdHeader) s += src.requestIdHeader + ": " + src.requestId + "\r\n";
  if (src.traceparent !== undefined) {
    s += "traceparent: " + src.traceparent + "\r\n";
    if (src.tracestate) s += "tracestate: " + src.tracestate + "\r\n";
  }
  if (framing >= 0) s += "Content-Length: " + framing + "\r\n";
  else if (framing === FRAMING_CHUNKED) s += "Transfer-Encoding: chunked\r\n";
  if (src.upgrade) s += "Connection: upgrade\r\n";
  return out.encode(s + "\r\n");
}
