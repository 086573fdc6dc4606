/**
 * Turns a DNS answer into a pool's member list.
 *
 * - The records taken are those of the asked type owned by the asked name or by the end of its
 *   CNAME chain in the answer (at most 8 links).
 * - A and AAAA: one member `ip:port` / `[ip]:port` per address, weight 1.
 * - SRV: only the records of the lowest priority (the others are backups in RFC 2782, which a
 *   pool's passive health already covers); weights 0..65535 become 1..1000 in proportion to the
 *   largest (all 0: all 1). A target with addresses in the additional section gives one member
 *   per address; otherwise `target:port`, resolved when a connection is made. A target of `.`
 *   means "no service" and gives no member.
 * - At most 10,000 members are taken, like a `PUT`.
 * - Members come sorted by address, so a name server that rotates its answers changes nothing;
 *   the same address twice keeps the larger weight.
 */
import { type DnsConfig, MAX_MEMBERS, type MemberConfig, validateMembers } from "../config/mod.ts";
import { DNS_TYPE, type DnsRecord, type DnsResponse } from "./dns_message.ts";

/** The members of an answer and how long it may be kept (the smallest TTL used), in seconds. */
export interface DnsMembers {
  readonly members: readonly MemberConfig[];
  readonly ttl: number;
}

const TYPE_OF = { A: DNS_TYPE.A, AAAA: DNS_TYPE.AAAA, SRV: DNS_TYPE.SRV } as const;
const MAX_CNAME_LINKS = 8;

type SrvRecord = Extract<DnsRecord, { type: 33 }>;
type AddressRecord = Extract<DnsRecord, { type: 1 | 28 }>;

function isAddress(r: DnsRecord): r is AddressRecord {
  return (r.type === DNS_TYPE.A || r.type === DNS_TYPE.AAAA) && "address" in r;
}

function hostPort(address: string, port: number): string {
  return address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;
}

/** Scales SRV weights into 1..1000, in proportion to the largest. */
export function scaleSrvWeights(weights: readonly number[]): number[] {
  const max = Math.max(0, ...weights);
  if (max === 0) return weights.map(() => 1);
  return weights.map((w) => Math.max(1, Math.round((w * 1000) / max)));
}

/** The members of `response` for `dns` (asked as `name`, normalised). */
export function membersFromAnswer(
  response: DnsResponse,
  dns: DnsConfig,
  name: string,
): DnsMembers {
  const wanted = TYPE_OF[dns.type];
  let owner = name;
  let ttl = Infinity;
  for (let i = 0; i <= MAX_CNAME_LINKS; i++) {
    const link = response.answers.find((r) => r.type === DNS_TYPE.CNAME && r.name === owner);
    if (link === undefined || !("target" in link)) break;
    ttl = Math.min(ttl, link.ttl);
    owner = link.target;
  }
  const records = response.answers.filter((r) => r.type === wanted && r.name === owner);
  const weights = new Map<string, number>();
  const add = (address: string, weight: number) => {
    weights.set(address, Math.max(weight, weights.get(address) ?? 0));
  };
  if (dns.type !== "SRV") {
    for (const r of records) {
      if (!isAddress(r)) continue;
      ttl = Math.min(ttl, r.ttl);
      add(hostPort(r.address, dns.port!), 1);
    }
  } else {
    const srv = records as SrvRecord[];
    const best = Math.min(...srv.map((r) => r.priority));
    const chosen = srv.filter((r) => r.priority === best && r.target !== "");
    const scaled = scaleSrvWeights(chosen.map((r) => r.weight));
    chosen.forEach((r, i) => {
      ttl = Math.min(ttl, r.ttl);
      const addresses = response.additional.filter((a): a is AddressRecord =>
        isAddress(a) && a.name === r.target
      );
      if (addresses.length === 0) add(`${r.target}:${r.port}`, scaled[i]);
      for (const a of addresses) {
        ttl = Math.min(ttl, a.ttl);
        add(hostPort(a.address, r.port), scaled[i]);
      }
    });
  }
  const list = [...weights].slice(0, MAX_MEMBERS).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([address, weight]) => ({ address, weight }));
  // The same checks as a PUT: a name that is no valid host gives no member, never a crash.
  const ok = list.filter((m) => validateMembers([m], "").errors.length === 0);
  const members = validateMembers(ok, "").members ?? [];
  return { members, ttl: ttl === Infinity ? 0 : ttl };
}
