import assert from "node:assert/strict";
import { compileTrusted } from "./trusted_proxies.ts";

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

Deno.test("compileTrusted matches bracketed and zoned peers by their address", () => {
  const trusted = compileTrusted(["fe80::/10", "10.0.0.0/8"]);
  assert.equal(trusted("fe80::1%eth0"), true);
  assert.equal(trusted("[fe80::1%eth0]"), true);
  assert.equal(trusted("[10.1.2.3]"), true);
  assert.equal(trusted("[fec0::1]"), false);
});
