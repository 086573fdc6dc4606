/**
 * The DNS wire format (RFC 1035, SRV from RFC 2782, AAAA from RFC 3596), as much as member
 * discovery needs: a query for one name and type, and the answer to it with its TTLs (which
 * `Deno.resolveDns` does not expose). The decoder refuses whatever it does not understand with
 * a `DnsFormatError`: a truncated or over-long message, a compression pointer that does not
 * point backwards, a label over 63 bytes or a name over 255, a label byte outside printable
 * ASCII or a dot, an A or AAAA record of the wrong size, record data that does not end where
 * its length says, a class other than IN, bytes after the last record, a message that is not a
 * standard-query response, or a question other than the one asked.
 */
import { formatIPv6 } from "../net/mod.ts";

/** Record types by name. */
export const DNS_TYPE = { A: 1, CNAME: 5, AAAA: 28, SRV: 33, OPT: 41 } as const;

/** Response codes scalwsd tells apart; any other is a failed resolution. */
export const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

/** A message the decoder does not understand. */
export class DnsFormatError extends Error {}

/** One resource record; `name` and targets are lower-case, without the final dot. */
export type DnsRecord =
  | { readonly name: string; readonly type: 1 | 28; readonly ttl: number; readonly address: string }
  | { readonly name: string; readonly type: 5; readonly ttl: number; readonly target: string }
  | {
    readonly name: string;
    readonly type: 33;
    readonly ttl: number;
    readonly priority: number;
    readonly weight: number;
    readonly port: number;
    readonly target: string;
  }
  /** Any other type: understood as a record, its data skipped. */
  | { readonly name: string; readonly type: number; readonly ttl: number };

/** A decoded response. */
export interface DnsResponse {
  readonly id: number;
  readonly rcode: number;
  /** TC: the answer did not fit a UDP datagram; ask again over TCP. */
  readonly truncated: boolean;
  readonly answers: readonly DnsRecord[];
  readonly authority: readonly DnsRecord[];
  readonly additional: readonly DnsRecord[];
}

/** The question a response must repeat. */
export interface DnsQuestion {
  readonly id: number;
  /** Lower-case, without the final dot. */
  readonly name: string;
  readonly type: number;
}

const MAX_NAME = 255;
const MAX_MESSAGE = 65_535;

/** Lower-cases `name`, drops one final dot and checks it can be asked; throws `DnsFormatError`. */
export function normaliseName(name: string): string {
  let n = name.toLowerCase();
  if (n.endsWith(".")) n = n.slice(0, -1);
  if (n === "") throw new DnsFormatError("name: must not be empty");
  const labels = n.split(".");
  let wire = 1;
  for (const label of labels) {
    if (label.length === 0 || label.length > 63) {
      throw new DnsFormatError(`name "${name}": labels must be 1 to 63 characters`);
    }
    for (let i = 0; i < label.length; i++) {
      const c = label.charCodeAt(i);
      if (c < 0x21 || c > 0x7e) throw new DnsFormatError(`name "${name}": invalid character`);
    }
    wire += label.length + 1;
  }
  if (wire > MAX_NAME) throw new DnsFormatError(`name "${name}": longer than 255 bytes`);
  return n;
}

/** Appends `name` (normalised) in wire form to `out`, uncompressed. */
export function pushName(out: number[], name: string): void {
  if (name !== "") {
    for (const label of name.split(".")) {
      out.push(label.length);
      for (let i = 0; i < label.length; i++) out.push(label.charCodeAt(i));
    }
  }
  out.push(0);
}

/** A standard query with recursion desired for `q.name` (normalised) of `q.type`, class IN. */
export function encodeQuery(q: DnsQuestion): Uint8Array {
  const out: number[] = [q.id >> 8, q.id & 0xff, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
  pushName(out, q.name);
  out.push(q.type >> 8, q.type & 0xff, 0, 1);
  return new Uint8Array(out);
}

class Reader {
  off = 0;
  constructor(readonly buf: Uint8Array) {}

  need(n: number): void {
    if (this.off + n > this.buf.length) throw new DnsFormatError("message is truncated");
  }
  u8(): number {
    this.need(1);
    return this.buf[this.off++];
  }
  u16(): number {
    this.need(2);
    const v = (this.buf[this.off] << 8) | this.buf[this.off + 1];
    this.off += 2;
    return v;
  }
  u32(): number {
    this.need(4);
    const b = this.buf;
    const v = ((b[this.off] << 24) | (b[this.off + 1] << 16) | (b[this.off + 2] << 8) |
      b[this.off + 3]) >>> 0;
    this.off += 4;
    return v;
  }

  /** A possibly compressed name; pointers must point before the label that holds them. */
  name(): string {
    const labels: string[] = [];
    let pos = this.off;
    let end = -1;
    let wire = 1;
    for (;;) {
      if (pos >= this.buf.length) throw new DnsFormatError("message is truncated");
      const len = this.buf[pos];
      if (len === 0) {
        pos++;
        break;
      }
      const kind = len & 0xc0;
      if (kind === 0xc0) {
        if (pos + 1 >= this.buf.length) throw new DnsFormatError("message is truncated");
        const target = ((len & 0x3f) << 8) | this.buf[pos + 1];
        // Backwards only: no loop can be built, and every name ends.
        if (target >= pos) throw new DnsFormatError("compression pointer does not point back");
        if (end < 0) end = pos + 2;
        pos = target;
        continue;
      }
      if (kind !== 0) throw new DnsFormatError("unknown label type");
      if (pos + 1 + len > this.buf.length) throw new DnsFormatError("message is truncated");
      wire += len + 1;
      if (wire > MAX_NAME) throw new DnsFormatError("name is longer than 255 bytes");
      let label = "";
      for (let i = pos + 1; i <= pos + len; i++) {
        const c = this.buf[i];
        if (c < 0x21 || c > 0x7e || c === 0x2e) {
          throw new DnsFormatError("name holds a byte outside printable ASCII or a dot");
        }
        label += String.fromCharCode(c >= 0x41 && c <= 0x5a ? c + 32 : c);
      }
      labels.push(label);
      pos += 1 + len;
    }
    this.off = end < 0 ? pos : end;
    return labels.join(".");
  }
}

function readRecord(r: Reader, section: "answer" | "authority" | "additional"): DnsRecord {
  const name = r.name();
  const type = r.u16();
  const klass = r.u16();
  let ttl = r.u32();
  const rdlength = r.u16();
  r.need(rdlength);
  const start = r.off;
  const end = start + rdlength;
  if (type === DNS_TYPE.OPT) {
    // EDNS: the class is the sender's payload size and the TTL holds flags.
    if (section !== "additional" || name !== "") throw new DnsFormatError("misplaced OPT record");
    r.off = end;
    return { name, type, ttl: 0 };
  }
  if (klass !== 1) throw new DnsFormatError(`record class ${klass} is not IN`);
  // RFC 2181 section 8: a TTL with the top bit set is read as zero.
  if (ttl > 0x7fffffff) ttl = 0;
  let rec: DnsRecord;
  switch (type) {
    case DNS_TYPE.A: {
      if (rdlength !== 4) throw new DnsFormatError("A record data is not 4 bytes");
      const b = r.buf;
      rec = {
        name,
        type,
        ttl,
        address: `${b[start]}.${b[start + 1]}.${b[start + 2]}.${b[start + 3]}`,
      };
      r.off = end;
      break;
    }
    case DNS_TYPE.AAAA: {
      if (rdlength !== 16) throw new DnsFormatError("AAAA record data is not 16 bytes");
      const groups: number[] = [];
      for (let i = 0; i < 8; i++) groups.push(r.u16());
      rec = { name, type, ttl, address: formatIPv6(groups) };
      break;
    }
    case DNS_TYPE.CNAME:
      rec = { name, type, ttl, target: r.name() };
      break;
    case DNS_TYPE.SRV: {
      const priority = r.u16();
      const weight = r.u16();
      const port = r.u16();
      rec = { name, type, ttl, priority, weight, port, target: r.name() };
      break;
    }
    default:
      r.off = end;
      rec = { name, type, ttl };
  }
  if (r.off !== end) throw new DnsFormatError("record data does not end where its length says");
  return rec;
}

/**
 * Decodes the response to `q`; throws `DnsFormatError` for anything it does not understand
 * (see the module comment). A response with another id is refused too: the caller ignores it.
 */
export function decodeResponse(buf: Uint8Array, q: DnsQuestion): DnsResponse {
  if (buf.length > MAX_MESSAGE) throw new DnsFormatError("message is longer than 65535 bytes");
  const r = new Reader(buf);
  const id = r.u16();
  const flags = r.u16();
  const qd = r.u16();
  const an = r.u16();
  const ns = r.u16();
  const ar = r.u16();
  if (id !== q.id) throw new DnsFormatError("id does not match the query");
  if ((flags & 0x8000) === 0) throw new DnsFormatError("message is not a response");
  if (((flags >> 11) & 0xf) !== 0) throw new DnsFormatError("opcode is not a standard query");
  if (qd !== 1) throw new DnsFormatError("response must repeat exactly one question");
  const qname = r.name();
  const qtype = r.u16();
  const qclass = r.u16();
  if (qname !== q.name || qtype !== q.type || qclass !== 1) {
    throw new DnsFormatError("question does not match the query");
  }
  const answers: DnsRecord[] = [];
  const authority: DnsRecord[] = [];
  const additional: DnsRecord[] = [];
  for (let i = 0; i < an; i++) answers.push(readRecord(r, "answer"));
  for (let i = 0; i < ns; i++) authority.push(readRecord(r, "authority"));
  for (let i = 0; i < ar; i++) additional.push(readRecord(r, "additional"));
  if (r.off !== buf.length) throw new DnsFormatError("bytes after the last record");
  return {
    id,
    rcode: flags & 0xf,
    truncated: (flags & 0x0200) !== 0,
    answers,
    authority,
    additional,
  };
}
