import assert from "node:assert/strict";
import { lockTime, tryLockFile } from "./lock_file.ts";

Deno.test("tryLockFile: one holder; a stale lock is taken over once; release removes only its own", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const path = `${dir}/k`;
    const now = Date.now();
    const a = tryLockFile(path, 1_000, now);
    assert.ok(a !== null);
    assert.equal(tryLockFile(path, 1_000, now + 500), null);
    assert.equal(lockTime(path), now);
    // Past staleMs: the first taker gets it, the next one finds it fresh again.
    const b = tryLockFile(path, 1_000, now + 2_000);
    assert.ok(b !== null);
    assert.equal(tryLockFile(path, 1_000, now + 2_001), null);
    assert.equal(lockTime(path), now + 2_000);
    a.release(); // taken over: not a's any more
    assert.equal(lockTime(path), now + 2_000);
    b.release();
    assert.equal(lockTime(path), null);
    // Nothing left beside it (the stale lock moved aside is gone).
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
