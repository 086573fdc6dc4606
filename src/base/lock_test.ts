import assert from "node:assert/strict";
import { Lock } from "./lock.ts";

Deno.test("Lock runs holders one at a time in arrival order", async () => {
  const lock = new Lock();
  const seen: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  const a = lock.run(async () => {
    seen.push("a start");
    await gate;
    seen.push("a end");
  });
  const b = lock.run(() => {
    seen.push("b");
  });
  await Promise.resolve();
  assert.deepEqual(seen, ["a start"]);
  release();
  await Promise.all([a, b]);
  assert.deepEqual(seen, ["a start", "a end", "b"]);
});

Deno.test("Lock keeps going after a holder throws", async () => {
  const lock = new Lock();
  await assert.rejects(lock.run(() => Promise.reject(new Error("boom"))), /boom/);
  assert.equal(await lock.run(() => 7), 7);
});
