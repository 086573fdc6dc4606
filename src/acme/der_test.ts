import assert from "node:assert/strict";
import {
  bitString,
  boolean,
  ecdsaSignature,
  explicit,
  implicitPrimitive,
  integer,
  nullValue,
  octetString,
  oid,
  pem,
  sequence,
  set,
  time,
  tlv,
  utf8String,
} from "./der.ts";

const hex = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, "0")).join(" ");

Deno.test("der integer: minimal two's complement bytes, a 0x00 before a high bit", () => {
  assert.equal(hex(integer(0)), "02 01 00");
  assert.equal(hex(integer(127)), "02 01 7f");
  assert.equal(hex(integer(128)), "02 02 00 80");
  assert.equal(hex(integer(256)), "02 02 01 00");
  assert.equal(hex(integer(new Uint8Array([0, 0, 0x01, 0x02]))), "02 02 01 02");
  assert.equal(hex(integer(new Uint8Array([0xff]))), "02 02 00 ff");
  assert.equal(hex(integer(new Uint8Array([]))), "02 01 00");
  assert.throws(() => integer(-1), RangeError);
  assert.throws(() => integer(1.5), RangeError);
});

Deno.test("der oid: first two arcs in one octet, base-128 arcs", () => {
  assert.equal(hex(oid("1.2.840.113549")), "06 06 2a 86 48 86 f7 0d");
  assert.equal(hex(oid("2.5.29.17")), "06 03 55 1d 11");
  assert.equal(hex(oid("1.2.840.10045.4.3.2")), "06 08 2a 86 48 ce 3d 04 03 02");
  assert.throws(() => oid("1"), RangeError);
  assert.throws(() => oid("3.1"), RangeError);
  assert.throws(() => oid("1.40"), RangeError);
  assert.throws(() => oid("1.2.x"), RangeError);
});

Deno.test("der lengths: short form below 128, long form above", () => {
  assert.equal(hex(tlv(0x04, new Uint8Array(127)).subarray(0, 2)), "04 7f");
  assert.equal(hex(tlv(0x04, new Uint8Array(200)).subarray(0, 3)), "04 81 c8");
  assert.equal(hex(tlv(0x04, new Uint8Array(300)).subarray(0, 4)), "04 82 01 2c");
  assert.equal(tlv(0x04, new Uint8Array(70_000)).length, 70_000 + 5);
});

Deno.test("der strings, containers and tags", () => {
  assert.equal(hex(nullValue()), "05 00");
  assert.equal(hex(boolean(true)), "01 01 ff");
  assert.equal(hex(utf8String("a")), "0c 01 61");
  assert.equal(hex(bitString(new Uint8Array([1]))), "03 02 00 01");
  assert.equal(hex(octetString(new Uint8Array([9]))), "04 01 09");
  assert.equal(hex(sequence(nullValue(), integer(1))), "30 05 05 00 02 01 01");
  // SET OF is sorted by encoding.
  assert.equal(hex(set(integer(2), integer(1))), "31 06 02 01 01 02 01 02");
  assert.equal(hex(explicit(0, integer(2))), "a0 03 02 01 02");
  assert.equal(hex(implicitPrimitive(2, new Uint8Array([0x61]))), "82 01 61");
});

Deno.test("der time: UTCTime until 2049, GeneralizedTime after", () => {
  const utc = time(Date.UTC(2026, 11, 1, 14, 5, 9, 999));
  assert.equal(utc[0], 0x17);
  assert.equal(new TextDecoder().decode(utc.subarray(2)), "261201140509Z");
  const gen = time(Date.UTC(2050, 0, 2, 3, 4, 5));
  assert.equal(gen[0], 0x18);
  assert.equal(new TextDecoder().decode(gen.subarray(2)), "20500102030405Z");
});

Deno.test("der ecdsaSignature: r || s becomes SEQUENCE {INTEGER r, INTEGER s}", () => {
  const raw = new Uint8Array(64);
  raw[0] = 0x80; // r needs a 0x00 to stay positive
  raw[63] = 0x01; // s is 1 after its leading zeros go
  const der = ecdsaSignature(raw);
  assert.equal(hex(der.subarray(0, 5)), "30 26 02 21 00");
  assert.equal(hex(der.subarray(der.length - 3)), "02 01 01");
  assert.throws(() => ecdsaSignature(new Uint8Array(63)), RangeError);
});

Deno.test("der pem: base64 at 64 columns between the labels", () => {
  const text = pem("TEST", new Uint8Array(100).fill(0xfb));
  const lines = text.trimEnd().split("\n");
  assert.equal(lines[0], "-----BEGIN TEST-----");
  assert.equal(lines[1].length, 64);
  assert.equal(lines.at(-1), "-----END TEST-----");
  assert.deepEqual(
    Uint8Array.from(atob(lines.slice(1, -1).join("")), (c) => c.charCodeAt(0)),
    new Uint8Array(100).fill(0xfb),
  );
});
