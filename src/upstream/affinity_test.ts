import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { AffinityKey, affinityValue, buildAffinityCookie, readCookie } from "./affinity.ts";

Deno.test("affinityValue is the first 16 bytes of HMAC-SHA256 of the address, in lower-case hex", () => {
  const bytes = new Uint8Array(32).fill(7);
  const key = new AffinityKey(bytes);
  const v = affinityValue(key, "192.0.2.5:8080");
  assert.match(v, /^[0-9a-f]{32}$/);
  const full = createHmac("sha256", bytes).update("192.0.2.5:8080").digest("hex");
  assert.equal(v, full.slice(0, 32));
  assert.equal(affinityValue(key, "192.0.2.5:8080"), v);
  assert.notEqual(affinityValue(key, "192.0.2.6:8080"), v);
  assert.notEqual(affinityValue(new AffinityKey(), "192.0.2.5:8080"), v);
});

Deno.test("AffinityKey is 32 random bytes by default and refuses short keys", () => {
  const a = new AffinityKey();
  const b = new AffinityKey();
  assert.equal(a.bytes.length, 32);
  assert.notDeepEqual(a.bytes, b.bytes);
  assert.throws(() => new AffinityKey(new Uint8Array(8)), /Affinity key is too short: 8 bytes/);
});

Deno.test("AffinityKey.fromFile creates a 0600 key file once and reads it back", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const path = `${dir}/affinity.key`;
    const a = AffinityKey.fromFile(path);
    assert.equal(Deno.statSync(path).mode! & 0o777, 0o600);
    assert.match(Deno.readTextFileSync(path), /^[0-9a-f]{64}\n$/);
    const b = AffinityKey.fromFile(path);
    assert.deepEqual(a.bytes, b.bytes);
    assert.equal(affinityValue(a, "x:1"), affinityValue(b, "x:1"));
    // An operator's key: trailing newline ignored.
    Deno.writeTextFileSync(path, "an operator chosen secret\n");
    assert.equal(
      affinityValue(AffinityKey.fromFile(path), "x:1"),
      createHmac("sha256", "an operator chosen secret").update("x:1").digest("hex").slice(0, 32),
    );
    Deno.writeTextFileSync(path, "short\n");
    assert.throws(() => AffinityKey.fromFile(path), /holds 5 bytes, at least 16 needed/);
    assert.throws(() => AffinityKey.fromFile(dir), /Cannot read affinity key file/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("buildAffinityCookie orders Path, HttpOnly, SameSite, Max-Age, Secure", () => {
  assert.equal(buildAffinityCookie("N", "v", 0, false), "N=v; Path=/; HttpOnly; SameSite=Lax");
  assert.equal(
    buildAffinityCookie("SHOP_NODE", "ab", 86400, true),
    "SHOP_NODE=ab; Path=/; HttpOnly; SameSite=Lax; Max-Age=86400; Secure",
  );
  assert.equal(
    buildAffinityCookie("N", "v", 0, true),
    "N=v; Path=/; HttpOnly; SameSite=Lax; Secure",
  );
  assert.equal(
    buildAffinityCookie("N", "v", 60, false),
    "N=v; Path=/; HttpOnly; SameSite=Lax; Max-Age=60",
  );
});

Deno.test("readCookie finds a cookie among several, with spaces and quotes", () => {
  const h = 'a=1; SCALWS_AFFINITY=abc123;b=2 ;  q = "quoted" ; empty=';
  assert.equal(readCookie(h, "SCALWS_AFFINITY"), "abc123");
  assert.equal(readCookie(h, "a"), "1");
  assert.equal(readCookie(h, "b"), "2");
  assert.equal(readCookie(h, "q"), "quoted");
  assert.equal(readCookie(h, "empty"), "");
  assert.equal(readCookie(h, "missing"), undefined);
  assert.equal(readCookie(null, "a"), undefined);
  assert.equal(readCookie("", "a"), undefined);
});

Deno.test("readCookie matches whole names only, not inside other names or values", () => {
  assert.equal(readCookie("XSCALWS=1; SCALWS=2", "SCALWS"), "2");
  assert.equal(readCookie("SCALWS_X=1; SCALWS=2", "SCALWS"), "2");
  assert.equal(readCookie("a=SCALWS=1; SCALWS=3", "SCALWS"), "3");
  assert.equal(readCookie("a=x SCALWS=1", "SCALWS"), undefined);
  assert.equal(readCookie("SCALWS=first; SCALWS=second", "SCALWS"), "first");
  assert.equal(readCookie("SCALWS", "SCALWS"), undefined);
});
