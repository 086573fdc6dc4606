/**
 * The net room's face: IP addresses and CIDRs (`ip.ts`: parsing, formatting, loopback) and
 * member addresses (`member_address.ts`). It knows nothing of HTTP.
 *
 * @module
 */

export {
  cidrError,
  formatIPv6,
  isLoopback,
  parseIP,
  parseIPv4,
  parseIPv6,
  parsePeerIp,
} from "./ip.ts";
export type { MemberAddress } from "./member_address.ts";
