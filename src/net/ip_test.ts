import assert from "node:assert/strict";
import {
  cidrError,
  formatIPv6,
  isLoopback,
  parseIP,
  parseIPv4,
  parseIPv6,
  parseIpWords,
  parsePeerIp,
} from "./ip.ts";

Deno.test("parseIPv4 accepts dotted quads and refuses leading zeros and out-of-range bytes", () => {
  assert.deepEqual(parseIPv4("192.0.2.5"), [192, 0, 2, 5]);
  assert.deepEqual(parseIPv4("0.0.0.0"), [0, 0, 0, 0]);
  for (const bad of ["010.0.0.1", "256.0.0.1", "1.2.3", "1.2.3.4.5", "1..2.3", "a.b.c.d", ""]) {
    assert.equal(parseIPv4(bad), undefined, bad);
  }
});

Deno.test("parseIPv6 expands :: and an IPv4 tail into eight groups", () => {
  assert.deepEqual(parseIPv6("::1"), [0, 0, 0, 0, 0, 0, 0, 1]);
  assert.deepEqual(parseIPv6("::"), [0, 0, 0, 0, 0, 0, 0, 0]);
  assert.deepEqual(parseIPv6("2001:DB8:0::5"), [0x2001, 0xdb8, 0, 0, 0, 0, 0, 5]);
  assert.deepEqual(parseIPv6("::ffff:192.0.2.5"), [0, 0, 0, 0, 0, 0xffff, 0xc000, 0x0205]);
  assert.deepEqual(parseIPv6("1:2:3:4:5:6:7:8"), [1, 2, 3, 4, 5, 6, 7, 8]);
});

Deno.test("parseIPv6 refuses malformed addresses", () => {
  for (
    const bad of [
      "1:2:3:4:5:6:7",
      "1:2:3:4:5:6:7:8:9",
      "1::2::3",
      ":::1",
      "1:::2",
      ":1::",
      "12345::1",
      "1:2:3:4:5:6:7::8",
      "fe80::1%eth0",
      "1.2.3.4::1",
      "::1.2.3",
      "g::1",
    ]
  ) {
    assert.equal(parseIPv6(bad), undefined, bad);
  }
});

Deno.test("formatIPv6 writes RFC 5952 text", () => {
  const f = (s: string) => formatIPv6(parseIPv6(s)!);
  assert.equal(f("2001:DB8:0::5"), "2001:db8::5");
  assert.equal(f("2001:db8:0:0:1:0:0:1"), "2001:db8::1:0:0:1"); // first of equal runs
  assert.equal(f("2001:db8:0:1:1:1:1:1"), "2001:db8:0:1:1:1:1:1"); // a single 0 stays
  assert.equal(f("1:0:0:2:0:0:0:3"), "1:0:0:2::3"); // the longest run wins
  assert.equal(f("0:0:0:0:0:0:0:0"), "::");
  assert.equal(f("0000:0000:0000:0000:0000:0000:0000:0001"), "::1");
  assert.equal(f("1:0:0:0:0:0:0:0"), "1::");
  assert.equal(f("::FFFF:C000:0205"), "::ffff:192.0.2.5");
  assert.equal(f("::ffff:192.0.2.5"), "::ffff:192.0.2.5");
});

Deno.test("parseIP and isLoopback", () => {
  assert.deepEqual(parseIP("::1")?.text, "::1");
  assert.equal(parseIP("127.0.0.1")?.version, 4);
  assert.equal(isLoopback(parseIP("127.1.2.3")!), true);
  assert.equal(isLoopback(parseIP("::1")!), true);
  assert.equal(isLoopback(parseIP("10.0.0.1")!), false);
  assert.equal(isLoopback(parseIP("::2")!), false);
  assert.equal(isLoopback(parseIP("::ffff:127.0.0.1")!), false);
});

Deno.test("cidrError accepts CIDRs and bare addresses and names the bad value", () => {
  for (const ok of ["10.0.0.0/8", "10.0.0.1", "::1/128", "2001:db8::/32", "0.0.0.0/0"]) {
    assert.equal(cidrError(ok), undefined, ok);
  }
  assert.equal(
    cidrError("10.0.0.0/33"),
    'invalid CIDR "10.0.0.0/33": prefix length must be between 0 and 32',
  );
  assert.equal(
    cidrError("::/129"),
    'invalid CIDR "::/129": prefix length must be between 0 and 128',
  );
  assert.equal(
    cidrError("10.0.0.0/"),
    'invalid CIDR "10.0.0.0/": prefix length must be between 0 and 32',
  );
  assert.equal(cidrError("example.com"), 'invalid CIDR "example.com"');
});

function words(ip: string): number[] | null {
  const out = new Uint32Array(4);
  return parsePeerIp(ip, out) ? [...out] : null;
}

Deno.test("parsePeerIp reads IPv4 as IPv4-mapped IPv6", () => {
  assert.deepEqual(words("10.1.2.3"), [0, 0, 0xffff, 0x0a010203]);
  assert.deepEqual(words("255.255.255.255"), [0, 0, 0xffff, 0xffffffff]);
});

Deno.test("parsePeerIp reads IPv6 forms", () => {
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

Deno.test("parsePeerIp refuses invalid addresses", () => {
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

Deno.test("parsePeerIp returns the version; brackets and a zone are dropped", () => {
  const out = new Uint32Array(4);
  assert.equal(parsePeerIp("10.1.2.3", out), 4);
  assert.equal(parsePeerIp("[10.1.2.3]", out), 4);
  assert.equal(parsePeerIp("::ffff:10.1.2.3", out), 6);
  assert.equal(parsePeerIp("[fe80::1%eth0]", out), 6);
  assert.deepEqual([...out], [0xfe800000, 0, 0, 1]);
  for (const bad of ["[", "[]", "[::1", "::1]", "%eth0", "[%eth0]"]) {
    assert.equal(parsePeerIp(bad, out), 0, bad);
  }
});

Deno.test("parseIpWords reads only s[from, to) and refuses brackets and zones", () => {
  const out = new Uint32Array(4);
  assert.equal(parseIpWords("x10.1.2.3/8", out, 1, 9), 4);
  assert.deepEqual([...out], [0, 0, 0xffff, 0x0a010203]);
  assert.equal(parseIpWords("2001:db8::/32", out, 0, 10), 6);
  assert.deepEqual([...out], [0x20010db8, 0, 0, 0]);
  // A colon outside the range does not make the text IPv6.
  assert.equal(parseIpWords("1.2.3.4:80", out, 0, 7), 4);
  assert.equal(parseIpWords("::1", out, 0, 1), 0);
  for (const bad of ["[::1]", "fe80::1%eth0", "1.2.3.4%eth0"]) {
    assert.equal(parseIpWords(bad, out), 0, bad);
  }
});
