import assert from "node:assert/strict";
import { entryForTest } from "./_entry_for_test.ts";
import { nameOf } from "./disk_format.ts";
import { DiskStore } from "./disk_store.ts";
import { setLogSink } from "../observe/log.ts";

const none = { get: () => null };
const fields = (o: Record<string, string>) => ({ get: (n: string) => o[n] ?? null });

async function tier(maxBytes = 1 << 20) {
  const root = await Deno.makeTempDir({ prefix: "scalwsd-disk-" });
  const errors = { value: 0 };
  const d = new DiskStore({ root, maxBytes, storeErrors: errors as never });
  return {
    d,
    root,
    errors,
    [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }),
  };
}

Deno.test("DiskStore: a written answer is read back by another store on the same path", async () => {
  await using t = await tier();
  const e = entryForTest({ size: 5_000, etag: '"a"' });
  await t.d.write("https://a.test/x", e);
  const other = new DiskStore({ root: t.root, maxBytes: 1 << 20 });
  const got = other.read("https://a.test/x", none);
  assert.ok(got !== null);
  assert.equal(got.body.length, 5_000);
  assert.equal(got.etag, '"a"');
  assert.equal(got.onDisk, true);
  assert.equal(other.read("https://a.test/y", none), null);
  // Nothing is left in tmp/ once written.
  assert.deepEqual([...Deno.readDirSync(`${t.root}/v1/tmp`)], []);
});

Deno.test("DiskStore: variants are chosen by the request's values of the Vary fields", async () => {
  await using t = await tier();
  const gz = entryForTest({ size: 1, select: [["accept-encoding", "gzip"]] });
  const br = entryForTest({ size: 2, select: [["accept-encoding", "br"]] });
  await t.d.write("https://a.test/v", gz);
  await t.d.write("https://a.test/v", br);
  assert.equal(t.d.read("https://a.test/v", fields({ "accept-encoding": "gzip" }))?.body.length, 1);
  assert.equal(t.d.read("https://a.test/v", fields({ "accept-encoding": "br" }))?.body.length, 2);
  assert.equal(t.d.read("https://a.test/v", fields({ "accept-encoding": "zstd" })), null);
  assert.equal(await t.d.removeKey("https://a.test/v"), 2);
  assert.equal(t.d.read("https://a.test/v", fields({ "accept-encoding": "gzip" })), null);
});

Deno.test("DiskStore: a truncated or corrupt file is a miss and is removed", async () => {
  await using t = await tier();
  await t.d.write("https://a.test/c", entryForTest({ size: 1_000 }));
  const name = nameOf("https://a.test/c");
  const file = `${t.root}/v1/${name.slice(0, 2)}/${name}`;
  const b = Deno.readFileSync(file);
  Deno.writeFileSync(file, b.subarray(0, b.length - 10));
  assert.equal(t.d.read("https://a.test/c", none), null);
  assert.throws(() => Deno.statSync(file), Deno.errors.NotFound);
});

Deno.test("DiskStore: purge by path, prefix and all", async () => {
  await using t = await tier();
  for (const k of ["/a/1", "/a/2?q", "/b/1", "/a"]) {
    await t.d.write(`https://a.test${k}`, entryForTest());
  }
  await t.d.write("https://other.test/a/1", entryForTest());
  assert.equal(await t.d.purge({ host: "a.test", path: "/a" }), 1);
  assert.equal(await t.d.purge({ host: "a.test", prefix: "/a/" }), 2);
  assert.ok(t.d.read("https://a.test/b/1", none) !== null);
  assert.equal(await t.d.purge({ all: true }), 2);
  assert.equal(t.d.read("https://other.test/a/1", none), null);
});

Deno.test("DiskStore: past its budget the least recently used files go, to 90%", async () => {
  await using t = await tier();
  for (let i = 0; i < 10; i++) {
    await t.d.write(`https://a.test/${i}`, entryForTest({ size: 9_000 }));
    const name = nameOf(`https://a.test/${i}`);
    // Older files first, /3 used last.
    const at = new Date(Date.now() - (100 - i) * 1000);
    Deno.utimeSync(`${t.root}/v1/${name.slice(0, 2)}/${name}`, at, at);
  }
  const name3 = nameOf("https://a.test/3");
  Deno.utimeSync(`${t.root}/v1/${name3.slice(0, 2)}/${name3}`, new Date(), new Date());
  const small = new DiskStore({ root: t.root, maxBytes: 50_000 });
  assert.equal(await small.trim(), true);
  assert.ok(small.bytes <= 45_000, `${small.bytes} bytes left`);
  const left = Array.from(
    { length: 10 },
    (_, i) => small.read(`https://a.test/${i}`, none) !== null,
  );
  // About 9.4 kB each: four fit in 45 kB, the one used last among them.
  assert.deepEqual(left, [false, false, false, true, false, false, false, true, true, true]);
  assert.equal(small.entries, 4);
  // Another store on the path reads the measurement.
  const other = new DiskStore({ root: t.root, maxBytes: 50_000 });
  assert.equal(other.entries, 4);
});

Deno.test("DiskStore: a directory it cannot write in stores nothing, counts the failure, throws nothing", async () => {
  await using t = await tier();
  // tmp/ as a plain file: every write fails, whoever runs the test (root ignores modes).
  Deno.removeSync(`${t.root}/v1/tmp`);
  Deno.writeTextFileSync(`${t.root}/v1/tmp`, "");
  const lines: string[] = [];
  setLogSink((l) => lines.push(l));
  try {
    await t.d.write("https://a.test/ro", entryForTest());
    await t.d.write("https://a.test/ro2", entryForTest());
  } finally {
    setLogSink(null);
  }
  assert.equal(t.errors.value, 2);
  assert.equal(t.d.read("https://a.test/ro", none), null);
  // One warning a minute at most.
  assert.equal(lines.filter((l) => l.includes('"cache_disk_store_failed"')).length, 1);
});

Deno.test("DiskStore: one fill lock per key; released after the write; stale locks are taken over", async () => {
  await using t = await tier();
  const a = t.d.lockFill("https://a.test/f", 10_000);
  assert.ok(a !== null && a !== "unlocked");
  assert.equal(t.d.lockFill("https://a.test/f", 10_000), null);
  t.d.holdFill("https://a.test/f", a);
  const waiting = t.d.waitFill("https://a.test/f", 10_000, 5_000);
  const write = t.d.write("https://a.test/f", entryForTest());
  t.d.releaseFill("https://a.test/f");
  await write;
  const t0 = performance.now();
  await waiting;
  assert.ok(performance.now() - t0 < 1_000);
  assert.ok(t.d.read("https://a.test/f", none) !== null);
  // A lock older than the timeout (its holder died) is taken over.
  const held = t.d.lockFill("https://a.test/g", 10_000);
  assert.ok(held !== null && held !== "unlocked");
  const t1 = performance.now();
  await t.d.waitFill("https://a.test/g", 100, 5_000);
  assert.ok(performance.now() - t1 < 1_000);
  const taken = t.d.lockFill("https://a.test/g", 100);
  assert.ok(taken !== null && taken !== "unlocked");
});

for (const fileCalls of ["libc", "deno"] as const) {
  Deno.test(`DiskStore (${fileCalls}): a file another store replaced or removed is never served from the one kept open`, async () => {
    await using t = await tier();
    const reader = new DiskStore({ root: t.root, maxBytes: 1 << 20, fileCalls });
    try {
      await t.d.write("https://a.test/r", entryForTest({ size: 3_000, etag: '"1"' }));
      const first = reader.read("https://a.test/r", none)!;
      assert.equal(first.etag, '"1"');
      assert.ok(first.lent !== null && first.body.buffer === first.lent.buffer);
      reader.release(first);
      assert.equal(first.lent, null);
      // Read again from the file kept open: the same answer.
      assert.equal(reader.read("https://a.test/r", none)?.etag, '"1"');
      const e2 = entryForTest({ size: 5_000, etag: '"2"' });
      e2.body.fill(9);
      await t.d.write("https://a.test/r", e2);
      const second = reader.read("https://a.test/r", none)!;
      assert.equal(second.etag, '"2"');
      assert.equal(second.body.length, 5_000);
      assert.equal(second.body[4_999], 9);
      await t.d.removeKey("https://a.test/r");
      assert.equal(reader.read("https://a.test/r", none), null);
    } finally {
      reader.close();
    }
  });
}

Deno.test("DiskStore.holds: a memory copy holds until another store removes or replaces its file", async () => {
  await using t = await tier();
  const other = new DiskStore({ root: t.root, maxBytes: 1 << 20 });
  try {
    const e = entryForTest({ size: 100, t: 1_000 });
    await t.d.write("https://a.test/h", e);
    const now = Date.now();
    assert.equal(t.d.holds("https://a.test/h", none, e, now), true);
    // Unchanged epoch: not checked again (the file could go only with a bump).
    assert.equal(t.d.holds("https://a.test/h", none, e, now), true);
    await other.removeKey("https://a.test/h");
    assert.equal(t.d.holds("https://a.test/h", none, e, now), false);
    const older = entryForTest({ size: 100, t: 500 });
    await other.write("https://a.test/h", older);
    assert.equal(t.d.holds("https://a.test/h", none, e, now), true);
    await other.write("https://a.test/h", entryForTest({ size: 100, t: 2_000 }));
    assert.equal(t.d.holds("https://a.test/h", none, e, now), false);
  } finally {
    other.close();
    t.d.close();
  }
});

Deno.test("DiskStore: answers written while a trim lists the directory stay counted after it", async () => {
  await using t = await tier(1 << 30);
  for (let i = 0; i < 200; i++) await t.d.write(`https://a.test/old/${i}`, entryForTest());
  // Writes that end while the trim runs: whether its listing saw them or not, they count.
  const trim = t.d.trim();
  await Promise.all(
    Array.from({ length: 20 }, (_, i) => t.d.write(`https://a.test/new/${i}`, entryForTest())),
  );
  assert.equal(await trim, true);
  let onDisk = 0;
  for (const shard of Deno.readDirSync(`${t.root}/v1`)) {
    if (!/^[0-9a-f]{2}$/.test(shard.name)) continue;
    for (const f of Deno.readDirSync(`${t.root}/v1/${shard.name}`)) {
      onDisk += Deno.statSync(`${t.root}/v1/${shard.name}/${f.name}`).size;
    }
  }
  assert.equal(t.d.bytes, onDisk);
  assert.equal(t.d.entries, 220);
});

Deno.test("DiskStore: bytes and entries follow replacements, purges and corrupt files at once", async () => {
  await using t = await tier();
  const sizeOf = (key: string) => {
    const name = nameOf(key);
    return Deno.statSync(`${t.root}/v1/${name.slice(0, 2)}/${name}`).size;
  };
  await t.d.write("https://a.test/a", entryForTest({ size: 1_000 }));
  await t.d.write("https://a.test/b", entryForTest({ size: 2_000 }));
  // A refreshed answer replaces its file: one entry, its new size.
  await t.d.write("https://a.test/b", entryForTest({ size: 3_000 }));
  assert.equal(t.d.entries, 2);
  assert.equal(t.d.bytes, sizeOf("https://a.test/a") + sizeOf("https://a.test/b"));
  assert.equal(await t.d.purge({ host: "a.test", path: "/a" }), 1);
  assert.equal(t.d.entries, 1);
  assert.equal(t.d.bytes, sizeOf("https://a.test/b"));
  // A file cut short by someone else, found by a read: removed and no longer counted (by the
  // size it had left; the next measurement corrects the rest).
  const name = nameOf("https://a.test/b");
  const file = `${t.root}/v1/${name.slice(0, 2)}/${name}`;
  const before = t.d.bytes;
  Deno.truncateSync(file, 100);
  assert.equal(t.d.read("https://a.test/b", none), null);
  assert.equal(t.d.entries, 0);
  assert.equal(t.d.bytes, before - 100);
});
