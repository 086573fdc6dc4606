import assert from "node:assert/strict";
import { encodeResponse } from "./_dns_encode.ts";
import {
  decodeResponse,
  DNS_TYPE,
  DnsFormatError,
  type DnsQuestion,
  encodeQuery,
  normaliseName,
  RCODE,
} from "./dns_message.ts";

const q: DnsQuestion = { id: 0x1234, name: "api.internal", type: DNS_TYPE.A };

Deno.test("encodeQuery writes a standard recursive query for one name", () => {
  assert.deepEqual(
    [...encodeQuery(q)],
    [
      0x12,
      0x34,
      0x01,
      0x00,
      0,
      1,
      0,
      0,
      0,
      0,
      0,
      0,
      3,
      97,
      112,
      105,
      8,
      105,
      110,
      116,
      101,
      114,
      110,
      97,
      108,
      0,
      0,
      1,
      0,
      1,
    ],
  );
});

Deno.test("normaliseName lower-cases, drops the final dot and refuses what cannot be asked", () => {
  assert.equal(normaliseName("API.Internal."), "api.internal");
  for (const bad of ["", ".", "a..b", "a b", "x".repeat(64), ("a".repeat(62) + ".").repeat(5)]) {
    assert.throws(() => normaliseName(bad), DnsFormatError, bad);
  }
});

Deno.test("decodeResponse reads A, AAAA, CNAME and SRV records with their TTLs", () => {
  const buf = encodeResponse({
    question: q,
    compress: true,
    answers: [
      { name: "api.internal", type: 5, ttl: 30, target: "web.internal" },
      { name: "web.internal", type: 1, ttl: 10, address: "127.0.0.2" },
      { name: "web.internal", type: 28, ttl: 0xffffffff, address: "::1" },
      { name: "api.internal", type: 33, ttl: 7, priority: 1, weight: 5, port: 80, target: "a.b" },
      { name: "api.internal", type: 99, ttl: 3 },
    ],
    additional: [{ name: "", type: DNS_TYPE.OPT, ttl: 0 }],
  });
  const r = decodeResponse(buf, q);
  assert.equal(r.rcode, RCODE.NOERROR);
  assert.equal(r.truncated, false);
  assert.deepEqual(r.answers, [
    { name: "api.internal", type: 5, ttl: 30, target: "web.internal" },
    { name: "web.internal", type: 1, ttl: 10, address: "127.0.0.2" },
    // A TTL with the top bit set reads as 0 (RFC 2181).
    { name: "web.internal", type: 28, ttl: 0, address: "::1" },
    { name: "api.internal", type: 33, ttl: 7, priority: 1, weight: 5, port: 80, target: "a.b" },
    { name: "api.internal", type: 99, ttl: 3 },
  ]);
  assert.equal(decodeResponse(encodeResponse({ question: q, rcode: 3 }), q).rcode, 3);
  assert.equal(decodeResponse(encodeResponse({ question: q, truncated: true }), q).truncated, true);
});

Deno.test("decodeResponse refuses what it does not understand", () => {
  const good = encodeResponse({
    question: q,
    compress: true,
    answers: [{ name: "api.internal", type: 1, ttl: 10, address: "127.0.0.2" }],
  });
  const refuse = (bytes: Uint8Array | number[], why: RegExp, question = q) =>
    assert.throws(() => decodeResponse(Uint8Array.from(bytes), question), (e: unknown) => {
      assert.ok(e instanceof DnsFormatError);
      assert.match(e.message, why);
      return true;
    });
  const edit = (at: number, value: number) => {
    const b = [...good];
    b[at] = value;
    return b;
  };
  refuse(good.subarray(0, 11), /truncated/);
  refuse(good.subarray(0, good.length - 1), /truncated/);
  refuse([...good, 0], /bytes after the last record/);
  refuse(edit(1, 0x35), /id does not match/);
  refuse(edit(2, 0x01), /not a response/);
  refuse(edit(2, 0x81 | 0x10), /opcode/);
  refuse(edit(5, 2), /exactly one question/);
  refuse(edit(13, 0x62), /question does not match/); // "bpi.internal"
  refuse(edit(12, 0x40), /unknown label type/);
  refuse(edit(14, 0x00), /name holds a byte/);
  refuse(edit(14, 0x2e), /name holds a byte/);
  const ans = 12 + 14 + 4; // answer record starts after the question
  refuse(edit(ans + 1, 0x1e), /does not point back/);
  refuse(edit(ans + 5, 3), /class 3 is not IN/);
  refuse(edit(ans + 11, 5), /A record data is not 4 bytes|truncated/);
  // SRV data longer than its target name.
  const srv = encodeResponse({
    question: { ...q, type: 33 },
    answers: [{
      name: "api.internal",
      type: 33,
      ttl: 1,
      priority: 0,
      weight: 0,
      port: 1,
      target: "x",
    }],
  });
  const longer = [...srv];
  longer[srv.length - 10] += 1; // rdlength low byte of the one record
  refuse(Array.from(longer).concat([0]), /does not end where its length says/, {
    ...q,
    type: 33,
  });
});
