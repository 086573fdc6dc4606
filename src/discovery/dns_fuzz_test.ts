/**
 * Seeded fuzzer of the DNS response decoder: valid responses (A, AAAA, CNAME, SRV, unknown
 * types, compressed or not) and mutations of them (flipped, dropped and inserted bytes). The
 * decoder must read every valid one exactly, and for a mutation either refuse it with a
 * `DnsFormatError` or return records that encode and decode to the same records again.
 * `SCALWS_FUZZ_CASES` sets the cases per seed (the suite runs a slice; `deno task fuzz` 100k).
 */
import assert from "node:assert/strict";
import { type Random, seeded } from "../base/random.ts";
import { encodeResponse } from "./_dns_encode.ts";
import {
  decodeResponse,
  DNS_TYPE,
  DnsFormatError,
  type DnsQuestion,
  type DnsRecord,
  type DnsResponse,
  normaliseName,
} from "./dns_message.ts";

const CASES = Number(Deno.env.get("SCALWS_FUZZ_CASES") ?? "3000");
const NAMES = ["api.internal", "a.api.internal", "x", "_http._tcp.svc.cluster.local", "b-2.test"];

function pick<T>(rnd: Random, list: readonly T[]): T {
  return list[Math.floor(rnd() * list.length)];
}

function record(rnd: Random, name: string): DnsRecord {
  const ttl = Math.floor(rnd() * 0x7fffffff);
  switch (Math.floor(rnd() * 5)) {
    case 0:
      return {
        name,
        type: 1,
        ttl,
        address: [0, 0, 0, 0].map(() => Math.floor(rnd() * 256)).join("."),
      };
    case 1:
      return {
        name,
        type: 28,
        ttl,
        address: pick(rnd, ["::1", "2001:db8::5", "fe80::1:2", "1:2:3:4:5:6:7:8"]),
      };
    case 2:
      return { name, type: 5, ttl, target: pick(rnd, NAMES) };
    case 3:
      return {
        name,
        type: 33,
        ttl,
        priority: Math.floor(rnd() * 65536),
        weight: Math.floor(rnd() * 65536),
        port: Math.floor(rnd() * 65536),
        target: pick(rnd, [...NAMES, ""]),
      };
    default:
      return { name, type: pick(rnd, [16, 99, 257]), ttl };
  }
}

function mutate(rnd: Random, buf: Uint8Array): Uint8Array {
  const b = [...buf];
  const n = 1 + Math.floor(rnd() * 3);
  for (let i = 0; i < n; i++) {
    const at = Math.floor(rnd() * b.length);
    switch (Math.floor(rnd() * 4)) {
      case 0:
        b[at] = Math.floor(rnd() * 256);
        break;
      case 1:
        b.splice(at, 1);
        break;
      case 2:
        b.splice(at, 0, Math.floor(rnd() * 256));
        break;
      default:
        b[at] = 0xc0 | Math.floor(rnd() * 4);
    }
  }
  return Uint8Array.from(b);
}

function again(r: DnsResponse, q: DnsQuestion): DnsResponse {
  return decodeResponse(
    encodeResponse({
      question: q,
      rcode: r.rcode,
      truncated: r.truncated,
      answers: r.answers,
      authority: r.authority,
      additional: r.additional,
    }),
    q,
  );
}

/** Runs `cases` cases from `seed`; throws on the first case the decoder gets wrong. */
export function fuzzDns(seed: number, cases: number) {
  const rnd = seeded(seed);
  const stats = { cases: 0, exact: 0, accepted: 0, refused: 0 };
  for (let i = 0; i < cases; i++) {
    const q: DnsQuestion = {
      id: Math.floor(rnd() * 65536),
      name: pick(rnd, NAMES),
      type: pick(rnd, [DNS_TYPE.A, DNS_TYPE.AAAA, DNS_TYPE.SRV]),
    };
    const count = Math.floor(rnd() * 4);
    const answers = Array.from(
      { length: count },
      () => record(rnd, rnd() < 0.7 ? q.name : pick(rnd, NAMES)),
    );
    const additional = rnd() < 0.3 ? [record(rnd, pick(rnd, NAMES))] : [];
    const spec = {
      question: q,
      rcode: pick(rnd, [0, 0, 0, 2, 3]),
      answers,
      additional,
      compress: rnd() < 0.5,
    };
    const buf = encodeResponse(spec);
    stats.cases++;
    if (rnd() < 0.25) {
      const r = decodeResponse(buf, q);
      assert.deepEqual(r.answers, answers, `seed ${seed} case ${i}`);
      assert.deepEqual(r.additional, additional);
      stats.exact++;
      continue;
    }
    const bad = mutate(rnd, buf);
    let r: DnsResponse;
    try {
      r = decodeResponse(bad, q);
    } catch (err) {
      if (!(err instanceof DnsFormatError)) throw new Error(`seed ${seed} case ${i}: ${err}`);
      stats.refused++;
      continue;
    }
    stats.accepted++;
    for (const rec of [...r.answers, ...r.authority, ...r.additional]) {
      if (rec.name !== "") assert.equal(normaliseName(rec.name), rec.name);
      if ("address" in rec && rec.type === 1) assert.match(rec.address, /^\d+\.\d+\.\d+\.\d+$/);
    }
    assert.deepEqual(again(r, q), r, `seed ${seed} case ${i}: accepted but not stable`);
  }
  return stats;
}

Deno.test("dns fuzz: valid answers read exactly, mutations refused or read consistently", () => {
  for (const seed of [17, 4242]) {
    const stats = fuzzDns(seed, CASES);
    assert.equal(stats.cases, CASES);
    assert.ok(stats.refused > CASES / 4 && stats.accepted > CASES / 50, JSON.stringify(stats));
  }
});
