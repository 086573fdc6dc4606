import assert from "node:assert/strict";
import { AffinityKey } from "./affinity.ts";
import { buildStickyCookie, issueSticky, stickyExpiry, verifySticky } from "./sticky.ts";

const AFF = "0123456789abcdef0123456789abcdef";
const NOW = 1_767_225_600_000;

Deno.test("issueSticky encodes member, expiry and signature; verifySticky gives the member back", () => {
  const key = new AffinityKey();
  const v = issueSticky(key, AFF, NOW, 3_600_000);
  assert.match(v, /^[0-9a-f]{32}\.1767229200\.[0-9a-f]{32}$/);
  assert.equal(v.slice(0, 32), AFF);
  assert.equal(verifySticky(key, v, NOW), AFF);
  assert.equal(verifySticky(key, v, NOW + 3_599_999), AFF);
  // A fresh key has no cache: verification goes through the HMAC.
  const key2 = new AffinityKey(key.bytes);
  assert.equal(verifySticky(key2, v, NOW + 1000), AFF);
});

Deno.test("verifySticky refuses a pin at and after its expiry", () => {
  const key = new AffinityKey();
  const v = issueSticky(key, AFF, NOW, 60_000);
  assert.equal(verifySticky(key, v, NOW + 60_000), undefined);
  assert.equal(verifySticky(new AffinityKey(key.bytes), v, NOW + 60_000), undefined);
  assert.equal(stickyExpiry(NOW + 1, 1000), 1_767_225_602);
});

Deno.test("verifySticky refuses forged, edited and malformed pins", () => {
  const key = new AffinityKey();
  const v = issueSticky(key, AFF, NOW, 3_600_000);
  const fresh = () => new AffinityKey(key.bytes); // no cache of verified values
  const flip = (s: string, i: number) =>
    s.slice(0, i) + (s[i] === "0" ? "1" : "0") + s.slice(i + 1);
  assert.equal(verifySticky(fresh(), flip(v, 3), NOW), undefined); // other member
  assert.equal(verifySticky(fresh(), v.replace(".1767229200.", ".1767299999."), NOW), undefined);
  assert.equal(verifySticky(fresh(), flip(v, v.length - 1), NOW), undefined); // signature
  assert.equal(verifySticky(new AffinityKey(), v, NOW), undefined); // other key
  assert.equal(verifySticky(fresh(), "", NOW), undefined);
  assert.equal(verifySticky(fresh(), v.toUpperCase(), NOW), undefined);
  assert.equal(verifySticky(fresh(), v.replace(".", "-"), NOW), undefined);
  assert.equal(verifySticky(fresh(), v + "0", NOW), undefined);
  assert.equal(verifySticky(fresh(), `${AFF}.abc.${v.slice(-32)}`, NOW), undefined);
  assert.equal(verifySticky(fresh(), `${AFF}.1767229200.${AFF}`, NOW), undefined);
  // The verified cache does not accept an edited copy either.
  assert.equal(verifySticky(key, v, NOW), AFF);
  assert.equal(verifySticky(key, flip(v, 40), NOW), undefined);
});

Deno.test("buildStickyCookie uses the affinity attributes and Max-Age of the TTL", () => {
  assert.equal(
    buildStickyCookie("SCALWS_STICKY_api", "v", 43_200_000, true),
    "SCALWS_STICKY_api=v; Path=/; HttpOnly; SameSite=Lax; Max-Age=43200; Secure",
  );
  assert.equal(
    buildStickyCookie("S", "v", 1500, false),
    "S=v; Path=/; HttpOnly; SameSite=Lax; Max-Age=2",
  );
});
