/**
 * A small ASN.1 DER writer: the few types a PKCS#10 certificate request and a self-signed
 * X.509 certificate need. Each function returns one complete TLV; containers take TLVs.
 */

/** The encoded length octets of `n` (short form below 128, else long form). */
function lengthOctets(n: number): number[] {
  if (n < 0x80) return [n];
  const out: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) out.unshift(v & 0xff);
  return [0x80 | out.length, ...out];
}

/** One TLV: `tag`, the length of `content`, `content`. */
export function tlv(tag: number, content: Uint8Array): Uint8Array {
  const len = lengthOctets(content.length);
  const out = new Uint8Array(1 + len.length + content.length);
  out[0] = tag;
  out.set(len, 1);
  out.set(content, 1 + len.length);
  return out;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** SEQUENCE of the given TLVs. */
export function sequence(...items: Uint8Array[]): Uint8Array {
  return tlv(0x30, concat(items));
}

/** SET of the given TLVs, sorted by their encodings as DER requires for SET OF. */
export function set(...items: Uint8Array[]): Uint8Array {
  const sorted = [...items].sort(compareBytes);
  return tlv(0x31, concat(sorted));
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/**
 * INTEGER from a non-negative value: a safe integer, or big-endian unsigned bytes (leading
 * zeros dropped, a 0x00 added when the high bit is set, so it stays positive).
 */
export function integer(value: number | Uint8Array): Uint8Array {
  let bytes: Uint8Array;
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new RangeError(`DER integer must be a non-negative safe integer, got ${value}`);
    }
    const b: number[] = [];
    for (let v = value; v > 0; v = Math.floor(v / 256)) b.unshift(v & 0xff);
    bytes = new Uint8Array(b);
  } else bytes = value;
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  let body = bytes.length === 0 ? new Uint8Array([0]) : bytes.subarray(start);
  if (body[0] & 0x80) body = concat([new Uint8Array([0]), body]);
  return tlv(0x02, body);
}

/** OBJECT IDENTIFIER from dotted text (`1.2.840.10045.2.1`). */
export function oid(dotted: string): Uint8Array {
  const arcs = dotted.split(".").map((s) => {
    if (!/^\d+$/.test(s)) throw new RangeError(`invalid object identifier "${dotted}"`);
    return Number(s);
  });
  if (arcs.length < 2 || arcs[0] > 2 || (arcs[0] < 2 && arcs[1] > 39)) {
    throw new RangeError(`invalid object identifier "${dotted}"`);
  }
  const out: number[] = [];
  const push = (v: number) => {
    const groups = [v & 0x7f];
    for (v = Math.floor(v / 128); v > 0; v = Math.floor(v / 128)) groups.unshift(0x80 | (v & 0x7f));
    out.push(...groups);
  };
  push(arcs[0] * 40 + arcs[1]);
  for (const a of arcs.slice(2)) push(a);
  return tlv(0x06, new Uint8Array(out));
}

/** NULL. */
export function nullValue(): Uint8Array {
  return new Uint8Array([0x05, 0x00]);
}

/** BOOLEAN. */
export function boolean(v: boolean): Uint8Array {
  return new Uint8Array([0x01, 0x01, v ? 0xff : 0x00]);
}

/** UTF8String. */
export function utf8String(s: string): Uint8Array {
  return tlv(0x0c, new TextEncoder().encode(s));
}

/** BIT STRING of whole bytes (no unused bits). */
export function bitString(bytes: Uint8Array): Uint8Array {
  return tlv(0x03, concat([new Uint8Array([0]), bytes]));
}

/** OCTET STRING. */
export function octetString(bytes: Uint8Array): Uint8Array {
  return tlv(0x04, bytes);
}

/** `[n]` EXPLICIT: a constructed context-specific tag around one TLV. */
export function explicit(n: number, inner: Uint8Array): Uint8Array {
  return tlv(0xa0 | n, inner);
}

/** `[n]` IMPLICIT over constructed content (a SET OF or SEQUENCE OF without its own tag). */
export function implicitConstructed(n: number, items: readonly Uint8Array[]): Uint8Array {
  return tlv(0xa0 | n, concat(items));
}

/** `[n]` IMPLICIT over primitive content (an IA5String dNSName is `[2]`). */
export function implicitPrimitive(n: number, content: Uint8Array): Uint8Array {
  return tlv(0x80 | n, content);
}

/** UTCTime (years 1950-2049) or GeneralizedTime (other years) of `ms`, to the second. */
export function time(ms: number): Uint8Array {
  const d = new Date(Math.floor(ms / 1000) * 1000);
  const y = d.getUTCFullYear();
  const p = (n: number) => String(n).padStart(2, "0");
  const rest = `${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}` +
    `${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
  if (y >= 1950 && y < 2050) return tlv(0x17, new TextEncoder().encode(`${p(y % 100)}${rest}`));
  return tlv(0x18, new TextEncoder().encode(`${String(y).padStart(4, "0")}${rest}`));
}

/** An ECDSA signature as WebCrypto gives it (r || s, equal halves) as a DER `Ecdsa-Sig-Value`. */
export function ecdsaSignature(raw: Uint8Array): Uint8Array {
  if (raw.length === 0 || raw.length % 2 !== 0) {
    throw new RangeError(`ECDSA signature of ${raw.length} bytes: must be r || s`);
  }
  const half = raw.length / 2;
  return sequence(integer(raw.subarray(0, half)), integer(raw.subarray(half)));
}

/** Base64 of DER bytes wrapped at 64 columns between `-----BEGIN label-----` lines. */
export function pem(label: string, der: Uint8Array): string {
  let b = "";
  for (let i = 0; i < der.length; i += 0x8000) {
    b += String.fromCharCode(...der.subarray(i, i + 0x8000));
  }
  const b64 = btoa(b);
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 64) lines.push(b64.slice(i, i + 64));
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}
