import assert from "node:assert/strict";
import { AvailabilityVersion } from "./availability_version.ts";

Deno.test("AvailabilityVersion changes on bump and once when expiry times have passed", () => {
  const v = new AvailabilityVersion();
  const v0 = v.current(0);
  v.bump();
  const v1 = v.current(0);
  assert.notEqual(v1, v0);
  v.expireAt(300);
  v.expireAt(100);
  v.expireAt(200);
  assert.equal(v.current(99), v1);
  const v2 = v.current(100);
  assert.notEqual(v2, v1);
  assert.equal(v.current(150), v2);
  const v3 = v.current(1000); // 200 and 300 passed: one change
  assert.notEqual(v3, v2);
  assert.equal(v.current(5000), v3);
});
