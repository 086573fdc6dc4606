import assert from "node:assert/strict";
import { compileTrusted, parseIp } from "./trusted.ts";

function words(ip: string): number[] | null {
  const out = new Uint32Array(4);
  return parseIp(ip, out) ? [...out] : null;
}

Deno.test("parseIp reads IPv4 as IPv4-mapped IPv6", () => {
  assert.deepEqual(words("10.1.2.3"), [0, 0, 0xffff, 0x0a010203]);
  assert.deepEqual(words("255.255.255.255"), [0, 0, 0xffff, 0xffffffff]);
});

Deno.test("parseIp reads IPv6 forms", () => {
  assert.deepEqual(words("::"), [0, 0, 0, 0]);
  assert.deepEqual(words("::1"), [0, 0, 0, 1]);
  assert.deepEqual(words("[::1]"), [0, 0, 0, 1]);
  assert.deepEqual(words("2001:db8::5"), [0x20010db8, 0, 0, 5]);
  assert.deepEqual(words("1:2:3:4:5:6:7:8"), [0x00010002, 0x00030004, 0x00050006, 0x00070008]);
  assert.deepEqual(words("1::"), [0x00010000, 0, 0, 0]);
  assert.deepEqual(words("fe80::1%eth0"), [0xfe800000, 0, 0, 1]);
  assert.deepEqual(words("::ffff:10.1.2.3"), [0, 0, 0xffff, 0x0a010203]);
  assert.deepEqual(words("::FFFF:a01:203"), [0, 0, 0xffff, 0x0a010203]);
});

Deno.test("parseIp refuses invalid addresses", () => {
  for (
    const bad of [
      "",
      "1.2.3",
      "1.2.3.4.5",
      "256.1.1.1",
      "01.1.1.1",
      "1.2.3.4 ",
      ":1",
      "1:",
      "1:::2",
      "1::2::3",
      "12345::",
      "1:2:3:4:5:6:7:8:9",
      "1:2:3:4:5:6:7::8",
      "::ffff:1a.2.3.4",
      "g::1",
      "localhost",
    ]
  ) {
    assert.equal(words(bad), null, bad);
  }
});

Deno.test("compileTrusted matches IPv4 and IPv6 CIDRs and bare addresses", () => {
  const trusted = compileTrusted(["10.0.0.0/8", "192.168.1.7", "2001:db8::/32", "::1"]);
  assert.equal(trusted("10.200.3.4"), true);
  assert.equal(trusted("11.0.0.1"), false);
  assert.equal(trusted("192.168.1.7"), true);
  assert.equal(trusted("192.168.1.8"), false);
  assert.equal(trusted("2001:db8:ffff::1"), true);
  assert.equal(trusted("2001:db9::1"), false);
  assert.equal(trusted("::1"), true);
  assert.equal(trusted("::2"), false);
  assert.equal(trusted("not an address"), false);
});

Deno.test("compileTrusted treats IPv4-mapped IPv6 peers like IPv4", () => {
  const trusted = compileTrusted(["10.0.0.0/8"]);
  assert.equal(trusted("::ffff:10.9.8.7"), true);
  assert.equal(trusted("::ffff:11.9.8.7"), false);
  const mapped = compileTrusted(["::ffff:0:0/96"]);
  assert.equal(mapped("1.2.3.4"), true);
  assert.equal(mapped("2001:db8::1"), false);
});

Deno.test("compileTrusted handles /0, /32 and host bits set", () => {
  assert.equal(compileTrusted(["0.0.0.0/0"])("8.8.8.8"), true);
  assert.equal(compileTrusted(["0.0.0.0/0"])("2001:db8::1"), false);
  assert.equal(compileTrusted(["::/0"])("2001:db8::1"), true);
  assert.equal(compileTrusted(["10.1.2.3/32"])("10.1.2.3"), true);
  assert.equal(compileTrusted(["10.1.2.3/32"])("10.1.2.4"), false);
  assert.equal(compileTrusted(["10.1.2.3/24"])("10.1.2.200"), true);
  assert.equal(compileTrusted(["10.1.2.3/31"])("10.1.2.2"), true);
  assert.equal(compileTrusted(["10.1.2.3/31"])("10.1.2.4"), false);
});

Deno.test("compileTrusted with no CIDRs trusts nobody", () => {
  assert.equal(compileTrusted([])("127.0.0.1"), false);
});

Deno.test("compileTrusted throws naming an invalid entry", () => {
  assert.throws(() => compileTrusted(["10.0.0.0/33"]), /prefix length in "10.0.0.0\/33"/);
  assert.throws(() => compileTrusted(["::/129"]), /"::\/129"/);
  assert.throws(() => compileTrusted(["10.0.0/8"]), /address "10.0.0\/8"/);
  assert.throws(() => compileTrusted(["10.0.0.0/"]), /"10.0.0.0\/"/);
});
