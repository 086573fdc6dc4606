import assert from "node:assert/strict";
import { AddressRules } from "./address_list.ts";

Deno.test("AddressRules: first match wins; the rest gets the opposite of the last rule", () => {
  const r = new AddressRules([
    { policy: "deny", cidrs: ["10.0.0.5", "2001:db8::/48"] },
    { policy: "allow", cidrs: ["10.0.0.0/8", "2001:db8::/32"] },
  ]);
  assert.equal(r.permits("10.0.0.5"), false);
  assert.equal(r.permits("10.9.0.1"), true);
  assert.equal(r.permits("::ffff:10.9.0.1"), true);
  assert.equal(r.permits("2001:db8::1"), false);
  assert.equal(r.permits("2001:db8:1::1"), true);
  assert.equal(r.permits("192.0.2.1"), false);
  assert.equal(r.permits("not an ip"), false);
  const deny = new AddressRules([{ policy: "deny", cidrs: ["192.0.2.0/24"] }]);
  assert.equal(deny.permits("192.0.2.77"), false);
  assert.equal(deny.permits("198.51.100.1"), true);
});
