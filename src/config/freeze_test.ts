import assert from "node:assert/strict";
import { deepFreeze } from "./freeze.ts";

Deno.test("deepFreeze freezes nested objects and arrays and returns its argument", () => {
  const value = { a: { b: [{ c: 1 }] }, d: [1, 2], e: null, f: "x" };
  assert.equal(deepFreeze(value), value);
  assert.ok(Object.isFrozen(value));
  assert.ok(Object.isFrozen(value.a));
  assert.ok(Object.isFrozen(value.a.b));
  assert.ok(Object.isFrozen(value.a.b[0]));
  assert.ok(Object.isFrozen(value.d));
  assert.throws(() => {
    value.a.b[0].c = 2;
  }, TypeError);
});

Deno.test("deepFreeze does not walk into an object that is already frozen", () => {
  const inner = { x: 1 };
  const frozen = Object.freeze({ inner });
  deepFreeze({ frozen });
  assert.equal(Object.isFrozen(inner), false);
  assert.equal(deepFreeze(5), 5);
  assert.equal(deepFreeze(null), null);
});
