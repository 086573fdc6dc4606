/**
 * Encodes DNS responses: for the test name servers and the fuzzer of `dns_message.ts`. Names
 * equal to the question's are written as a compression pointer to it when `compress` is set.
 */
import { parseIPv6 } from "../net/mod.ts";
import { DNS_TYPE, type DnsQuestion, type DnsRecord, pushName } from "./dns_message.ts";

export interface ResponseSpec {
  readonly question: DnsQuestion;
  readonly rcode?: number;
  readonly truncated?: boolean;
  readonly answers?: readonly DnsRecord[];
  readonly authority?: readonly DnsRecord[];
  readonly additional?: readonly DnsRecord[];
  readonly compress?: boolean;
}

function u16(out: number[], v: number): void {
  out.push((v >> 8) & 0xff, v & 0xff);
}

/** The wire form of a response; unknown record types get empty data. */
export function encodeResponse(spec: ResponseSpec): Uint8Array {
  const q = spec.question;
  const out: number[] = [];
  u16(out, q.id);
  u16(out, 0x8180 | (spec.truncated ? 0x0200 : 0) | (spec.rcode ?? 0));
  const an = spec.answers ?? [], ns = spec.authority ?? [], ar = spec.additional ?? [];
  u16(out, 1);
  u16(out, an.length);
  u16(out, ns.length);
  u16(out, ar.length);
  pushName(out, q.name);
  u16(out, q.type);
  u16(out, 1);
  const name = (n: string) => {
    if (spec.compress && n === q.name && n !== "") u16(out, 0xc00c);
    else pushName(out, n);
  };
  for (const rec of [...an, ...ns, ...ar]) {
    name(rec.name);
    u16(out, rec.type);
    u16(out, rec.type === DNS_TYPE.OPT ? 1232 : 1);
    out.push(
      (rec.ttl >>> 24) & 0xff,
      (rec.ttl >>> 16) & 0xff,
      (rec.ttl >>> 8) & 0xff,
      rec.ttl & 0xff,
    );
    const data: number[] = [];
    if ("address" in rec && rec.type === DNS_TYPE.A) {
      for (const part of rec.address.split(".")) data.push(Number(part));
    } else if ("address" in rec) {
      for (const g of parseIPv6(rec.address)!) u16(data, g);
    } else if ("priority" in rec) {
      u16(data, rec.priority);
      u16(data, rec.weight);
      u16(data, rec.port);
      pushName(data, rec.target);
    } else if ("target" in rec) {
      pushName(data, rec.target);
    }
    u16(out, data.length);
    out.push(...data);
  }
  return new Uint8Array(out);
}
