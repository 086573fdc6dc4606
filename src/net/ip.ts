/**
 * IP address syntax, the one parser for config checks and the per-request trusted-proxy match:
 * strict IPv4 dotted quads, IPv6 (`::`, an IPv4 tail), RFC 5952 canonical text, CIDR checks.
 * The core writes 128 bits into a caller's `Uint32Array` (IPv4 as `::ffff:a.b.c.d`) over a
 * range of the text, so the request path neither slices nor allocates.
 */

/** The family of a parsed address; parsers return 0 for text that is not an address. */
export type IpVersion = 4 | 6;

/**
 * Parses `s[from, to)` as an IPv4 or IPv6 address (no brackets, no zone) into four big-endian
 * 32-bit words, IPv4 as IPv4-mapped IPv6. Returns the version, or 0 (then `out` is garbage).
 * Text with a `:` is IPv6; leading zeros in IPv4 (`010.0.0.1`) are refused as ambiguous.
 */
export function parseIpWords(
  s: string,
  out: Uint32Array,
  from = 0,
  to: number = s.length,
): IpVersion | 0 {
  const colon = s.indexOf(":", from);
  if (colon >= 0 && colon < to) return parseV6(s, from, to, out) ? 6 : 0;
  const v4 = parseV4(s, from, to);
  if (v4 < 0) return 0;
  out[0] = 0;
  out[1] = 0;
  out[2] = 0xffff;
  out[3] = v4;
  return 4;
}

/**
 * Like `parseIpWords` over the whole text, but also accepts brackets (`[::1]`) and a zone
 * (`fe80::1%eth0`, dropped), as socket peers and `X-Forwarded-For` hops may carry them.
 */
export function parsePeerIp(text: string, out: Uint32Array): IpVersion | 0 {
  let from = 0;
  let to = text.length;
  if (to > 1 && text.charCodeAt(0) === 0x5b && text.charCodeAt(to - 1) === 0x5d) {
    from = 1;
    to--;
  }
  const zone = text.indexOf("%", from);
  if (zone >= 0 && zone < to) to = zone;
  return parseIpWords(text, out, from, to);
}

/** An IPv4 dotted quad in s[from, to) as an unsigned 32-bit number, or -1. */
function parseV4(s: string, from: number, to: number): number {
  let value = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) {
      // No leading zeros: "010" is octal in some parsers, so refuse the ambiguity.
      if (digits > 0 && part === 0) return -1;
      part = part * 10 + (c - 0x30);
      if (++digits > 3 || part > 255) return -1;
    } else if (c === 0x2e) {
      if (digits === 0 || ++dots > 3) return -1;
      value = value * 256 + part;
      part = 0;
      digits = 0;
    } else {
      return -1;
    }
  }
  if (digits === 0 || dots !== 3) return -1;
  return value * 256 + part;
}

// Module scratch for IPv6 groups: parsing is synchronous, so one buffer serves every call.
const groups16 = new Uint16Array(8);

/** IPv6 in s[from, to): hex groups, `::` at most once, a dotted IPv4 tail. */
function parseV6(s: string, from: number, to: number, out: Uint32Array): boolean {
  if (to - from < 2) return false;
  let n = 0; // groups written
  let gap = -1; // index in `groups16` where "::" stands
  let i = from;
  if (s.charCodeAt(i) === 0x3a) {
    if (s.charCodeAt(i + 1) !== 0x3a) return false;
    gap = 0;
    i += 2;
  }
  while (i < to) {
    let value = 0;
    let digits = 0;
    const start = i;
    while (i < to) {
      const h = hexValue(s.charCodeAt(i));
      if (h < 0) break;
      value = value * 16 + h;
      if (++digits > 4) return false;
      i++;
    }
    if (i < to && s.charCodeAt(i) === 0x2e) {
      // An IPv4 tail runs to the end and fills the last two groups.
      if (n > 6) return false;
      const v4 = parseV4(s, start, to);
      if (v4 < 0) return false;
      groups16[n++] = v4 >>> 16;
      groups16[n++] = v4 & 0xffff;
      break;
    }
    if (digits === 0 || n === 8) return false;
    groups16[n++] = value;
    if (i === to) break;
    if (s.charCodeAt(i) !== 0x3a) return false;
    i++;
    if (i < to && s.charCodeAt(i) === 0x3a) {
      if (gap >= 0) return false;
      gap = n;
      i++;
    } else if (i === to) {
      return false;
    }
  }
  if (gap < 0) {
    if (n !== 8) return false;
  } else {
    // `::` stands for at least one zero group: move the tail to the end, zero the middle.
    if (n > 7) return false;
    const shift = 8 - n;
    for (let k = n - 1; k >= gap; k--) groups16[k + shift] = groups16[k];
    for (let k = 0; k < shift; k++) groups16[gap + k] = 0;
  }
  for (let w = 0; w < 4; w++) out[w] = (groups16[2 * w] * 0x10000 + groups16[2 * w + 1]) >>> 0;
  return true;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

// Scratch for the config-time helpers below; they copy out what they return.
const words = new Uint32Array(4);

function bytesOf(v: number): number[] {
  return [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255];
}

function groupsOf(w: Uint32Array): number[] {
  const groups: number[] = [];
  for (let i = 0; i < 4; i++) groups.push(w[i] >>> 16, w[i] & 0xffff);
  return groups;
}

/**
 * Parses a dotted-quad IPv4 address into its four bytes, or returns undefined.
 * Leading zeros (`010.0.0.1`) are refused: other parsers read them as octal.
 */
export function parseIPv4(text: string): number[] | undefined {
  return parseIpWords(text, words) === 4 ? bytesOf(words[3]) : undefined;
}

/**
 * Parses an IPv6 address without brackets into its eight 16-bit groups, or returns undefined.
 * Accepts `::` once and a dotted IPv4 tail; zone identifiers (`%eth0`) are refused.
 */
export function parseIPv6(text: string): number[] | undefined {
  return parseIpWords(text, words) === 6 ? groupsOf(words) : undefined;
}

/**
 * Formats eight groups as RFC 5952 text: lower-case hex, the longest run of two or more zero
 * groups (the first one on a tie) as `::`, and IPv4-mapped addresses as `::ffff:a.b.c.d`.
 */
export function formatIPv6(groups: readonly number[]): string {
  if (
    groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 &&
    groups[5] === 0xffff
  ) {
    const g6 = groups[6];
    const g7 = groups[7];
    return `::ffff:${g6 >> 8}.${g6 & 255}.${g7 >> 8}.${g7 & 255}`;
  }
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (from: number, to: number) =>
    groups.slice(from, to).map((g) => g.toString(16)).join(":");
  if (bestStart === -1) return hex(0, 8);
  return `${hex(0, bestStart)}::${hex(bestStart + bestLength, 8)}`;
}

/** A parsed IP address with its canonical text (IPv6 without brackets). */
export interface IP {
  readonly version: IpVersion;
  /** 4 bytes for IPv4, 16 for IPv6. */
  readonly bytes: readonly number[];
  readonly text: string;
}

/** Parses an IPv4 or IPv6 address (no brackets, no zone) into canonical form, or undefined. */
export function parseIP(text: string): IP | undefined {
  const version = parseIpWords(text, words);
  if (version === 0) return undefined;
  if (version === 4) {
    const bytes = bytesOf(words[3]);
    return { version, bytes, text: bytes.join(".") };
  }
  const groups = groupsOf(words);
  const bytes: number[] = [];
  for (const g of groups) bytes.push(g >> 8, g & 255);
  return { version, bytes, text: formatIPv6(groups) };
}

/** True for 127.0.0.0/8 and ::1 (not for `::ffff:127.0.0.1`). */
export function isLoopback(ip: IP): boolean {
  if (ip.version === 4) return ip.bytes[0] === 127;
  for (let i = 0; i < 15; i++) if (ip.bytes[i] !== 0) return false;
  return ip.bytes[15] === 1;
}

/**
 * Checks `address/prefix` or a bare address (a host route); returns an error message or
 * undefined. Host bits below the prefix are allowed, as in nginx's `set_real_ip_from`.
 */
export function cidrError(text: string): string | undefined {
  const slash = text.indexOf("/");
  const version = parseIpWords(text, words, 0, slash === -1 ? text.length : slash);
  if (version === 0) return `invalid CIDR "${text}"`;
  if (slash === -1) return undefined;
  const prefix = text.slice(slash + 1);
  const max = version === 4 ? 32 : 128;
  if (!/^(0|[1-9][0-9]{0,2})$/.test(prefix) || Number(prefix) > max) {
    return `invalid CIDR "${text}": prefix length must be between 0 and ${max}`;
  }
  return undefined;
}
