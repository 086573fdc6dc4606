/**
 * `allow` / `deny`: the client address (after `trusted_proxies`) against CIDR rules, first
 * match wins, 403 when denied. Consecutive `allow` and `deny` policies of a route's list form
 * one rule list; an address no rule matches gets the opposite of the last rule (after an
 * `allow` list everyone else is denied, after a `deny` list everyone else is allowed), as
 * nginx's `allow`/`deny` with a final `deny all` reads. IPv4-mapped IPv6 addresses match IPv4
 * rules. One parser: `net/ip.ts`.
 */
import type { AddressPolicy } from "../../config/mod.ts";
import { parsePeerIp } from "../../net/mod.ts";
import type { Exchange } from "../exchange.ts";
import { answer, type Policy } from "./policy.ts";

const scratch = new Uint32Array(4);

/** One compiled rule list. */
export class AddressRules {
  /** Four masked words and four masks per rule. */
  private readonly nets: Uint32Array;
  private readonly masks: Uint32Array;
  private readonly allow: boolean[];
  private readonly otherwise: boolean;

  constructor(policies: readonly AddressPolicy[]) {
    const rules: { words: number[]; mask: number[]; allow: boolean }[] = [];
    for (const p of policies) {
      for (const cidr of p.cidrs) {
        const slash = cidr.indexOf("/");
        const addr = slash < 0 ? cidr : cidr.slice(0, slash);
        if (!parsePeerIp(addr, scratch)) throw new Error(`invalid address "${cidr}"`);
        const v4 = addr.indexOf(":") < 0;
        let bits = slash < 0 ? (v4 ? 32 : 128) : Number(cidr.slice(slash + 1));
        if (v4) bits += 96;
        const mask: number[] = [];
        const words: number[] = [];
        for (let w = 0; w < 4; w++) {
          const take = Math.max(0, Math.min(32, bits - 32 * w));
          const m = take === 0 ? 0 : (0xffffffff << (32 - take)) >>> 0;
          mask.push(m);
          words.push((scratch[w] & m) >>> 0);
        }
        rules.push({ words, mask, allow: p.policy === "allow" });
      }
    }
    this.nets = new Uint32Array(rules.flatMap((r) => r.words));
    this.masks = new Uint32Array(rules.flatMap((r) => r.mask));
    this.allow = rules.map((r) => r.allow);
    this.otherwise = rules.length === 0 ? true : !rules[rules.length - 1].allow;
  }

  /** Whether `ip` may pass; an address that does not parse only passes with no rule at all. */
  permits(ip: string): boolean {
    if (!parsePeerIp(ip, scratch)) return this.allow.length === 0;
    const n = this.nets;
    const m = this.masks;
    for (let r = 0, k = 0; r < this.allow.length; r++, k += 4) {
      if (
        ((scratch[0] & m[k]) >>> 0) === n[k] &&
        ((scratch[1] & m[k + 1]) >>> 0) === n[k + 1] &&
        ((scratch[2] & m[k + 2]) >>> 0) === n[k + 2] &&
        ((scratch[3] & m[k + 3]) >>> 0) === n[k + 3]
      ) return this.allow[r];
    }
    return this.otherwise;
  }
}

export function addressPolicy(policies: readonly AddressPolicy[]): Policy {
  const rules = new AddressRules(policies);
  return {
    name: policies.map((p) => p.policy).join("+"),
    request(ex: Exchange) {
      return rules.permits(ex.client) ? null : answer(ex, 403, "Forbidden");
    },
  };
}
