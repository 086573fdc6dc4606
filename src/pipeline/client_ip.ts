/**
 * The client address after `trusted_proxies`: when the direct peer is trusted, the
 * `X-Forwarded-For` chain is walked from the right, skipping trusted hops; the first untrusted
 * address is the client. A hop is an IP address, as nginx's realip module reads them also with a
 * port (`203.0.113.7:4711`, `[2001:db8::7]:443`, dropped) or in brackets; the walk stops at a
 * hop that is no address, and the client is then the last trusted hop (the peer itself when the
 * rightmost hop is not an address): text a client wrote never becomes its address.
 */
import { parsePeerIp } from "../net/mod.ts";

const words = new Uint32Array(4);

/** The address of one `X-Forwarded-For` hop, without brackets or port; null if it has none. */
export function hopAddress(hop: string): string | null {
  if (hop.charCodeAt(0) === 0x5b) {
    // [IPv6] or [IPv6]:port
    const close = hop.indexOf("]");
    if (close < 0) return null;
    const rest = hop.length - close - 1;
    if (rest > 0 && !isPort(hop, close + 1)) return null;
    const inner = hop.slice(1, close);
    return parsePeerIp(inner, words) === 6 ? inner : null;
  }
  if (parsePeerIp(hop, words) !== 0) return hop;
  // IPv4:port
  const colon = hop.indexOf(":");
  if (colon < 0 || !isPort(hop, colon)) return null;
  const v4 = hop.slice(0, colon);
  return parsePeerIp(v4, words) === 4 ? v4 : null;
}

/** `s` from `at` is `:` and 1 to 5 digits. */
function isPort(s: string, at: number): boolean {
  const n = s.length - at - 1;
  if (s.charCodeAt(at) !== 0x3a || n < 1 || n > 5) return false;
  for (let i = at + 1; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

export function clientAddress(
  peer: string,
  headers: { get(name: string): string | null },
  trusted: (ip: string) => boolean,
): string {
  if (!trusted(peer)) return peer;
  const xff = headers.get("x-forwarded-for");
  if (xff === null) return peer;
  let end = xff.length;
  let client = peer;
  while (end > 0) {
    const comma = xff.lastIndexOf(",", end - 1);
    const hop = xff.slice(comma + 1, end).trim();
    end = comma < 0 ? 0 : comma;
    if (hop.length === 0) continue;
    const address = hopAddress(hop);
    if (address === null) break;
    client = address;
    if (!trusted(address)) break;
  }
  return client;
}
