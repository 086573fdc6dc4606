/**
 * Trusted-proxy matching. Every address is handled as 128 bits, IPv4 as its IPv4-mapped IPv6
 * form, so `10.0.0.0/8` also matches `::ffff:10.1.2.3` and `::ffff:0:0/96` matches all IPv4.
 */

/** Parses an IPv4 or IPv6 address (brackets and a `%zone` allowed) into 4 words; false if invalid. */
export function parseIp(text: string, out: Uint32Array): boolean {
  let s = text;
  if (s.length > 1 && s.charCodeAt(0) === 0x5b && s.charCodeAt(s.length - 1) === 0x5d) {
    s = s.slice(1, -1);
  }
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  if (s.indexOf(":") < 0) {
    const v4 = parseV4(s, 0, s.length);
    if (v4 < 0) return false;
    out[0] = 0;
    out[1] = 0;
    out[2] = 0xffff;
    out[3] = v4;
    return true;
  }
  return parseV6(s, out);
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

const groups = new Uint16Array(8);

function parseV6(s: string, out: Uint32Array): boolean {
  let n = 0; // groups written
  let gap = -1; // index in `groups` where "::" stands
  let i = 0;
  const len = s.length;
  if (len < 2) return false;
  if (s.charCodeAt(0) === 0x3a) {
    if (s.charCodeAt(1) !== 0x3a) return false;
    gap = 0;
    i = 2;
    if (i === len) {
      groups.fill(0);
      return finishV6(0, 0, out);
    }
  }
  while (i < len) {
    let value = 0;
    let digits = 0;
    const start = i;
    while (i < len) {
      const h = hexValue(s.charCodeAt(i));
      if (h < 0) break;
      value = value * 16 + h;
      if (++digits > 4) return false;
      i++;
    }
    if (i < len && s.charCodeAt(i) === 0x2e) {
      // Embedded IPv4 in the last 32 bits.
      if (n > 6) return false;
      const v4 = parseV4(s, start, len);
      if (v4 < 0) return false;
      groups[n++] = v4 >>> 16;
      groups[n++] = v4 & 0xffff;
      i = len;
      break;
    }
    if (digits === 0 || n === 8) return false;
    groups[n++] = value;
    if (i === len) break;
    if (s.charCodeAt(i) !== 0x3a) return false;
    i++;
    if (i < len && s.charCodeAt(i) === 0x3a) {
      if (gap >= 0) return false;
      gap = n;
      i++;
    } else if (i === len) {
      return false;
    }
  }
  return finishV6(n, gap, out);
}

function finishV6(n: number, gap: number, out: Uint32Array): boolean {
  if (gap < 0) {
    if (n !== 8) return false;
  } else {
    if (n > 7) return false;
    const tail = n - gap;
    const shift = 8 - n;
    for (let k = tail - 1; k >= 0; k--) groups[gap + shift + k] = groups[gap + k];
    for (let k = 0; k < shift; k++) groups[gap + k] = 0;
  }
  for (let w = 0; w < 4; w++) out[w] = (groups[2 * w] * 0x10000 + groups[2 * w + 1]) >>> 0;
  return true;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

const scratch = new Uint32Array(4);

/**
 * Builds a matcher for trusted proxy CIDRs (`10.0.0.0/8`, `2001:db8::/32`, a bare address as a
 * host route). Throws naming the first invalid entry. An invalid `ip` never matches.
 */
export function compileTrusted(cidrs: readonly string[]): (ip: string) => boolean {
  const nets: number[] = [];
  const masks: number[] = [];
  for (const cidr of cidrs) {
    const slash = cidr.indexOf("/");
    const addr = slash < 0 ? cidr : cidr.slice(0, slash);
    if (!parseIp(addr, scratch)) throw new Error(`invalid trusted proxy address "${cidr}"`);
    const v4 = addr.indexOf(":") < 0;
    let bits = v4 ? 32 : 128;
    if (slash >= 0) {
      const text = cidr.slice(slash + 1);
      if (!/^[0-9]{1,3}$/.test(text) || Number(text) > bits) {
        throw new Error(`invalid trusted proxy prefix length in "${cidr}"`);
      }
      bits = Number(text);
    }
    if (v4) bits += 96;
    for (let w = 0; w < 4; w++) {
      const take = Math.max(0, Math.min(32, bits - 32 * w));
      const mask = take === 0 ? 0 : (0xffffffff << (32 - take)) >>> 0;
      masks.push(mask);
      nets.push((scratch[w] & mask) >>> 0);
    }
  }
  const count = nets.length;
  if (count === 0) return neverTrusted;
  return function isTrusted(ip: string): boolean {
    if (!parseIp(ip, scratch)) return false;
    for (let k = 0; k < count; k += 4) {
      if (
        ((scratch[0] & masks[k]) >>> 0) === nets[k] &&
        ((scratch[1] & masks[k + 1]) >>> 0) === nets[k + 1] &&
        ((scratch[2] & masks[k + 2]) >>> 0) === nets[k + 2] &&
        ((scratch[3] & masks[k + 3]) >>> 0) === nets[k + 3]
      ) return true;
    }
    return false;
  };
}

function neverTrusted(_ip: string): boolean {
  return false;
}
