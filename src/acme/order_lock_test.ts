import assert from "node:assert/strict";
import { tryLock } from "./order_lock.ts";

Deno.test("tryLock: one holder at a time; released, it can be taken again", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/x.lock`;
    const a = await tryLock(path, 1000, 60_000);
    assert.ok(a !== null);
    assert.equal(await tryLock(path, 2000, 60_000), null);
    await a.release();
    const b = await tryLock(path, 3000, 60_000);
    assert.ok(b !== null);
    await b.release();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tryLock: a stale lock is taken over, and its old owner's release leaves the new one", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/x.lock`;
    const dead = await tryLock(path, 1000, 60_000);
    assert.ok(dead !== null);
    const next = await tryLock(path, 1000 + 60_000, 60_000);
    assert.ok(next !== null);
    await dead.release();
    assert.equal(await tryLock(path, 1000 + 60_001, 60_000), null);
    await next.release();
    // A lock file that is not ours and not JSON counts by its modification time (fresh here).
    await Deno.writeTextFile(path, "garbage");
    assert.equal(await tryLock(path, Date.now(), 60_000), null);
    assert.ok(await tryLock(path, Date.now() + 120_000, 60_000) !== null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
