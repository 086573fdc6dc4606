/**
 * Affinity cookies: the value names a member without revealing its address, as the first
 * 16 bytes of HMAC-SHA256 of the member's canonical address, in lower-case hex. The key is
 * random per process, or read from `server.affinity_key_file` so that instances share it.
 */

import { createHmac } from "node:crypto";

/** Random bytes of a generated key. */
export const AFFINITY_KEY_BYTES = 32;
/** The shortest key accepted from a file. */
export const AFFINITY_KEY_MIN_BYTES = 16;

/** An HMAC key for affinity values and sticky pins. */
export class AffinityKey {
  readonly bytes: Uint8Array;

  /** Uses `bytes`, or 32 random bytes when absent. */
  constructor(bytes?: Uint8Array) {
    if (bytes === undefined) {
      bytes = crypto.getRandomValues(new Uint8Array(AFFINITY_KEY_BYTES));
    } else if (bytes.length < AFFINITY_KEY_MIN_BYTES) {
      throw new Error(
        `Affinity key is too short: ${bytes.length} bytes, at least ${AFFINITY_KEY_MIN_BYTES} needed`,
      );
    }
    this.bytes = bytes;
  }

  /**
   * Reads the key from `path`: its bytes without trailing whitespace. When the file does not
   * exist it is created (mode 0600) holding 64 random hex digits, which are then the key.
   */
  static fromFile(path: string): AffinityKey {
    let data: Uint8Array;
    try {
      data = Deno.readFileSync(path);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) {
        throw new Error(`Cannot read affinity key file ${path}: ${(err as Error).message}`);
      }
      data = createKeyFile(path);
    }
    const end = keyLength(data);
    if (end < AFFINITY_KEY_MIN_BYTES) {
      throw new Error(
        `Affinity key file ${path} holds ${end} bytes, at least ${AFFINITY_KEY_MIN_BYTES} needed`,
      );
    }
    return new AffinityKey(data.slice(0, end));
  }
}

/** The key's length in a key file's bytes: without trailing whitespace (a final newline). */
export function keyLength(data: Uint8Array): number {
  let end = data.length;
  while (
    end > 0 &&
    (data[end - 1] === 10 || data[end - 1] === 13 || data[end - 1] === 32 || data[end - 1] === 9)
  ) {
    end--;
  }
  return end;
}

function createKeyFile(path: string): Uint8Array {
  const random = crypto.getRandomValues(new Uint8Array(AFFINITY_KEY_BYTES));
  let hex = "";
  for (const b of random) hex += (b < 16 ? "0" : "") + b.toString(16);
  const data = new TextEncoder().encode(hex + "\n");
  try {
    Deno.writeFileSync(path, data, { mode: 0o600, createNew: true });
    return data;
  } catch (err) {
    // Another instance created it first: use theirs so that both agree.
    if (err instanceof Deno.errors.AlreadyExists) return Deno.readFileSync(path);
    throw new Error(`Cannot create affinity key file ${path}: ${(err as Error).message}`);
  }
}

/** The affinity cookie value of a member: 32 lower-case hex digits. */
export function affinityValue(key: AffinityKey, canonicalAddress: string): string {
  return createHmac("sha256", key.bytes).update(canonicalAddress).digest("hex").slice(0, 32);
}

/**
 * A `Set-Cookie` value: `NAME=VALUE; Path=/; HttpOnly; SameSite=Lax`, then `; Max-Age=N` when
 * `maxAgeSeconds` is above 0 (otherwise a session cookie), then `; Secure` when `secure`.
 */
export function buildAffinityCookie(
  name: string,
  value: string,
  maxAgeSeconds: number,
  secure: boolean,
): string {
  let s = name + "=" + value + "; Path=/; HttpOnly; SameSite=Lax";
  if (maxAgeSeconds > 0) s += "; Max-Age=" + Math.floor(maxAgeSeconds);
  if (secure) s += "; Secure";
  return s;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9;
}

/**
 * The value of cookie `name` in a `Cookie` header (`a=1; b="2"`), without surrounding spaces
 * and quotes; the first one when repeated; undefined when absent. Scans the header in place.
 */
export function readCookie(cookieHeader: string | null, name: string): string | undefined {
  if (cookieHeader === null || name.length === 0) return undefined;
  const h = cookieHeader;
  const len = h.length;
  let from = 0;
  for (;;) {
    const at = h.indexOf(name, from);
    if (at < 0) return undefined;
    from = at + 1;
    let p = at - 1;
    while (p >= 0 && isSpace(h.charCodeAt(p))) p--;
    if (p >= 0 && h.charCodeAt(p) !== 59) continue; // not at the start of a pair
    let q = at + name.length;
    while (q < len && isSpace(h.charCodeAt(q))) q++;
    if (q >= len || h.charCodeAt(q) !== 61) continue; // a longer name, or no "="
    let s = q + 1;
    while (s < len && isSpace(h.charCodeAt(s))) s++;
    let e = h.indexOf(";", s);
    if (e < 0) e = len;
    while (e > s && isSpace(h.charCodeAt(e - 1))) e--;
    if (e - s >= 2 && h.charCodeAt(s) === 34 && h.charCodeAt(e - 1) === 34) {
      s++;
      e--;
    }
    return h.slice(s, e);
  }
}
