/**
 * The disk tier's file format (version 1) and file names. One file holds one stored answer (a
 * variant) or, for a key whose answers vary, the list of request fields that select its variant.
 * A file is a fixed 24-byte header, a JSON meta part and the body:
 *
 * ```text
 * 0  "SCWC"            magic
 * 4  u8   version      1
 * 5  u8   kind         1: an answer, 2: a variant index (no body)
 * 6  u16  reserved     0
 * 8  u32  meta length  bytes of the UTF-8 JSON that follows the header
 * 12 u32  meta check   FNV-1a (32 bit) of those bytes
 * 16 f64  body length  bytes of body after the meta part
 * ```
 *
 * Integers are little-endian. A file whose length is not exactly 24 + meta + body, whose magic,
 * version, kind or meta check differ, or whose meta does not parse is corrupt. The body carries
 * no checksum: files are written whole and renamed into place, so a short or garbled file is a
 * torn write (caught by the length) or a disk fault; checking every body on every hit would cost
 * more than the hit itself. Not for the memory tier: that keeps `Entry` objects.
 */
import { type Bytes, Entry, type EntryInit } from "./entry.ts";

export const MAGIC = 0x43574353; // "SCWC" read as a little-endian u32
export const VERSION = 1;
export const KIND_ANSWER = 1;
export const KIND_INDEX = 2;
export const HEADER_SIZE = 24;

const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true });

/** FNV-1a over bytes, 32 bit. */
export function fnv1a(b: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b[i], 0x01000193);
  return h >>> 0;
}

/**
 * 64 bits of hash of `s` as 16 hex digits: the file name of a key. Not cryptographic: every
 * file names its key inside, so two keys that meet in one name only replace each other.
 */
export function nameOf(s: string): string {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  b = Math.imul(b ^ (b >>> 16), 0xc2b2ae35);
  b ^= b >>> 16;
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0");
}

/** The name of a variant's file: the key's name, `-`, and the name of its selecting values. */
export function variantName(keyName: string, values: readonly (string | null)[]): string {
  let s = "";
  for (const v of values) s += v === null ? "\u0001" : v + "\u0000";
  return `${keyName}-${nameOf(s)}`;
}

/**
 * The meta part of an answer's file: what `Entry` is made from besides its body, and the key it
 * is stored under; a NaN `dateValue` is written as null (JSON has no NaN).
 */
export type AnswerMeta = Omit<EntryInit, "body" | "dateValue" | "immutable"> & {
  readonly key: string;
  readonly dateValue: number | null;
  readonly immutable: boolean;
};

/** The meta part of a variant index: the key and the names that select its variants. */
interface IndexMeta {
  key: string;
  names: readonly string[];
}

function frame(kind: number, meta: unknown, body: Uint8Array | null): Uint8Array<ArrayBuffer> {
  const m = enc.encode(JSON.stringify(meta));
  const blen = body === null ? 0 : body.length;
  const out = new Uint8Array(HEADER_SIZE + m.length + blen);
  const v = new DataView(out.buffer);
  v.setUint32(0, MAGIC, true);
  out[4] = VERSION;
  out[5] = kind;
  v.setUint32(8, m.length, true);
  v.setUint32(12, fnv1a(m), true);
  v.setFloat64(16, blen, true);
  out.set(m, HEADER_SIZE);
  if (body !== null) out.set(body, HEADER_SIZE + m.length);
  return out;
}

/** The file bytes of entry `e` stored under `key`. */
export function encodeAnswer(key: string, e: Entry): Uint8Array<ArrayBuffer> {
  const meta: AnswerMeta = {
    key,
    status: e.status,
    headers: e.headers,
    requestTime: e.requestTime,
    responseTime: e.responseTime,
    dateValue: Number.isNaN(e.dateValue) ? null : e.dateValue,
    ageValue: e.ageValue,
    lifetime: e.lifetime,
    staleWhileRevalidate: e.staleWhileRevalidate,
    staleIfError: e.staleIfError,
    noCache: e.noCache,
    mustRevalidate: e.mustRevalidate,
    immutable: e.immutable,
    etag: e.etag,
    lastModified: e.lastModified,
    selectNames: e.selectNames,
    selectValues: e.selectValues,
    owner: e.owner,
    ...(e.own ? { own: true } : {}),
  };
  return frame(KIND_ANSWER, meta, e.body);
}

/** The file bytes of the variant index of `key`. */
export function encodeIndex(key: string, names: readonly string[]): Uint8Array<ArrayBuffer> {
  const meta: IndexMeta = { key, names };
  return frame(KIND_INDEX, meta, null);
}

/** What a file holds: an answer, a variant index, or nothing usable (`corrupt`). */
export type Decoded =
  | { readonly kind: "answer"; readonly key: string; readonly entry: Entry }
  | { readonly kind: "index"; readonly key: string; readonly names: readonly string[] }
  | { readonly kind: "corrupt" };

const CORRUPT: Decoded = { kind: "corrupt" };

/** What a file's fixed header says: its kind and the lengths of its meta part and body. */
export interface Frame {
  readonly kind: number;
  readonly metaLength: number;
  readonly metaCheck: number;
  readonly bodyLength: number;
}

/** The fixed header at the start of `b`; null when it is not one of this format. */
export function frameOf(b: Uint8Array): Frame | null {
  if (b.length < HEADER_SIZE) return null;
  const v = new DataView(b.buffer, b.byteOffset, HEADER_SIZE);
  if (v.getUint32(0, true) !== MAGIC || b[4] !== VERSION) return null;
  const kind = b[5];
  if (kind !== KIND_ANSWER && kind !== KIND_INDEX) return null;
  const bodyLength = v.getFloat64(16, true);
  if (!Number.isSafeInteger(bodyLength) || bodyLength < 0) return null;
  return { kind, metaLength: v.getUint32(8, true), metaCheck: v.getUint32(12, true), bodyLength };
}

/** What a file holds besides the body: an answer's meta part, or a variant index. */
export type Head =
  | { readonly kind: "answer"; readonly key: string; readonly meta: AnswerMeta }
  | { readonly kind: "index"; readonly key: string; readonly names: readonly string[] };

const isStr = (x: unknown): x is string => typeof x === "string";
const isNum = (x: unknown): x is number => typeof x === "number";
const isStrOrNull = (x: unknown) => x === null || typeof x === "string";

/** The meta part `m` of a file framed by `f`, checked; null when corrupt. */
export function headOf(f: Frame, m: Uint8Array): Head | null {
  if (m.length !== f.metaLength || fnv1a(m) !== f.metaCheck) return null;
  let meta: unknown;
  try {
    meta = JSON.parse(dec.decode(m));
  } catch {
    return null;
  }
  if (typeof meta !== "object" || meta === null) return null;
  if (f.kind === KIND_INDEX) {
    const x = meta as IndexMeta;
    if (f.bodyLength !== 0 || !isStr(x.key) || !Array.isArray(x.names)) return null;
    return x.names.every(isStr) ? { kind: "index", key: x.key, names: x.names } : null;
  }
  const x = meta as AnswerMeta;
  if (
    !isStr(x.key) || !isNum(x.status) || !Array.isArray(x.headers) ||
    !x.headers.every((h) => Array.isArray(h) && h.length === 2 && isStr(h[0]) && isStr(h[1])) ||
    !isNum(x.requestTime) || !isNum(x.responseTime) ||
    !(x.dateValue === null || isNum(x.dateValue)) ||
    !isNum(x.ageValue) || !isNum(x.lifetime) || !isNum(x.staleWhileRevalidate) ||
    !isNum(x.staleIfError) || !isStrOrNull(x.etag) || !isStrOrNull(x.lastModified) ||
    !Array.isArray(x.selectNames) || !x.selectNames.every(isStr) ||
    !Array.isArray(x.selectValues) || x.selectValues.length !== x.selectNames.length ||
    !x.selectValues.every(isStrOrNull) || !isStr(x.owner)
  ) {
    return null;
  }
  return { kind: "answer", key: x.key, meta: x };
}

/** A new entry from an answer's meta part and `body`. */
export function entryOf(m: AnswerMeta, body: Bytes): Entry {
  return new Entry({
    status: m.status,
    // Shared with the decoded meta: entries replace their header list, never edit it.
    headers: m.headers,
    body,
    requestTime: m.requestTime,
    responseTime: m.responseTime,
    dateValue: m.dateValue ?? NaN,
    ageValue: m.ageValue,
    lifetime: m.lifetime,
    staleWhileRevalidate: m.staleWhileRevalidate,
    staleIfError: m.staleIfError,
    noCache: m.noCache === true,
    mustRevalidate: m.mustRevalidate === true,
    immutable: m.immutable === true,
    etag: m.etag,
    lastModified: m.lastModified,
    selectNames: m.selectNames,
    selectValues: m.selectValues,
    owner: m.owner,
    own: m.own === true,
  });
}

/** Reads a whole file (see the module comment); the entry's body is a view of `b`. */
export function decode(b: Uint8Array<ArrayBuffer>): Decoded {
  const f = frameOf(b);
  if (f === null || HEADER_SIZE + f.metaLength + f.bodyLength !== b.length) return CORRUPT;
  const body = HEADER_SIZE + f.metaLength;
  const h = headOf(f, b.subarray(HEADER_SIZE, body));
  if (h === null) return CORRUPT;
  if (h.kind === "index") return h;
  return { kind: "answer", key: h.key, entry: entryOf(h.meta, b.subarray(body)) };
}

/** The key a file names, from its first bytes; null when they are not a whole header and meta. */
export function keyOfHead(b: Uint8Array<ArrayBuffer>): string | null {
  if (b.length < HEADER_SIZE) return null;
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (v.getUint32(0, true) !== MAGIC || b[4] !== VERSION) return null;
  const mlen = v.getUint32(8, true);
  if (HEADER_SIZE + mlen > b.length) return null;
  const m = b.subarray(HEADER_SIZE, HEADER_SIZE + mlen);
  if (fnv1a(m) !== v.getUint32(12, true)) return null;
  try {
    const meta = JSON.parse(dec.decode(m));
    return isStr(meta?.key) ? meta.key : null;
  } catch {
    return null;
  }
}
