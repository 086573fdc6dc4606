/**
 * Trusted-proxy matching on the request path. Every address is handled as 128 bits, IPv4 as its
 * IPv4-mapped IPv6 form, so `10.0.0.0/8` also matches `::ffff:10.1.2.3` and `::ffff:0:0/96`
 * matches all IPv4.
 */
import { parsePeerIp } from "../net/mod.ts";

// Parsing and matching are synchronous, so one buffer serves every call: no allocation per call.
const scratch = new Uint32Array(4);

/**
 * Builds a matcher for trusted proxy CIDRs (`10.0.0.0/8`, `2001:db8::/32`, a bare address as a
 * host route). Throws naming the first invalid entry. An invalid `ip` never matches; peers may
 * carry brackets and a zone (`[fe80::1%eth0]`).
 */
export function compileTrusted(cidrs: readonly string[]): (ip: string) => boolean {
  const nets: number[] = [];
  const masks: number[] = [];
  for (const cidr of cidrs) {
    const slash = cidr.indexOf("/");
    const addr = slash < 0 ? cidr : cidr.slice(0, slash);
    if (!parsePeerIp(addr, scratch)) throw new Error(`invalid trusted proxy address "${cidr}"`);
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
    if (!parsePeerIp(ip, scratch)) return false;
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
