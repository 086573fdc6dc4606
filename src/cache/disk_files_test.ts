import assert from "node:assert/strict";
import { giveBody, MAP_MAX, OpenFiles, REORDER_MS, takeBody } from "./disk_files.ts";

const enc = new TextEncoder();
const text = (b: Uint8Array) => new TextDecoder().decode(b);

for (const calls of ["libc", "deno"] as const) {
  Deno.test(`OpenFiles (${calls}): a kept file is read at an offset until it is replaced or removed`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "scalwsd-files-" });
    const files = new OpenFiles<string>(2, calls);
    try {
      const p = `${dir}/a`;
      Deno.writeFileSync(p, enc.encode("0123456789"));
      const f = files.get(p, 1)!;
      assert.equal(f.size, 10);
      f.head = "decoded";
      const buf = new Uint8Array(4);
      assert.ok(files.read(f, buf, 3));
      assert.equal(text(buf), "3456");
      // Kept: the same open file, its head decoded once.
      assert.equal(files.get(p, 2), f);
      assert.equal(f.used, 2);
      // Replaced by a rename (as every writer does): the old file is never read again.
      Deno.writeFileSync(`${dir}/tmp`, enc.encode("abcdefghij"));
      Deno.renameSync(`${dir}/tmp`, p);
      const g = files.get(p, 3)!;
      assert.notEqual(g, f);
      assert.equal(g.head, null);
      assert.ok(files.read(g, buf, 0));
      assert.equal(text(buf), "abcd");
      // Past its end: a short read.
      assert.equal(files.read(g, buf, 8), false);
      Deno.removeSync(p);
      assert.equal(files.get(p, 4), null);
      assert.equal(files.size, 0);
    } finally {
      files.closeAll();
      await Deno.remove(dir, { recursive: true });
    }
  });

  Deno.test(`OpenFiles (${calls}): at most max files open, least recently used closed first, idle ones closed`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "scalwsd-files-" });
    const files = new OpenFiles<string>(2, calls);
    const s = REORDER_MS;
    // One shared epoch throughout (0): no file changed, none is checked again.
    try {
      for (const n of ["a", "b", "c"]) Deno.writeFileSync(`${dir}/${n}`, enc.encode(n));
      const a = files.get(`${dir}/a`, 1 * s, 0)!;
      files.get(`${dir}/b`, 2 * s, 0);
      assert.equal(files.get(`${dir}/a`, 3 * s, 0), a); // a is now the most recently used
      // Within REORDER_MS of its last use: a keeps its place (and its time).
      assert.equal(files.get(`${dir}/a`, 4 * s - 1, 0), a);
      assert.equal(a.used, 3 * s);
      files.get(`${dir}/c`, 4 * s, 0); // b goes
      assert.equal(files.size, 2);
      assert.equal(files.get(`${dir}/a`, 5 * s, 0), a);
      files.closeIdle(5 * s); // c (used at 4 s) goes, a stays
      assert.equal(files.size, 1);
      assert.equal(files.get(`${dir}/a`, 6 * s, 0), a);
      files.drop(`${dir}/a`);
      assert.equal(files.size, 0);
    } finally {
      files.closeAll();
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("takeBody: pooled buffers of 16 and 64 KiB are reused; larger ones are not kept", () => {
  const a = takeBody(100);
  assert.equal(a.length, 16_384);
  giveBody(a);
  assert.equal(takeBody(16_384), a);
  const b = takeBody(16_385);
  assert.equal(b.length, 65_536);
  giveBody(b);
  assert.equal(takeBody(60_000), b);
  const c = takeBody(70_000);
  assert.equal(c.length, 70_000);
  giveBody(c);
  assert.notEqual(takeBody(70_000), c);
});

Deno.test("OpenFiles (libc): files up to MAP_MAX are read from a mapping, larger ones with pread", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-files-" });
  const files = new OpenFiles<string>(4, "libc");
  try {
    const bytes = (n: number) => new Uint8Array(n).map((_, i) => (i * 7) & 0xff);
    Deno.writeFileSync(`${dir}/small`, bytes(MAP_MAX));
    Deno.writeFileSync(`${dir}/large`, bytes(MAP_MAX + 1));
    const s = files.get(`${dir}/small`, 1)!;
    const l = files.get(`${dir}/large`, 1)!;
    assert.ok(s.mapped !== null);
    assert.equal(s.mapped.bytes.length, MAP_MAX);
    assert.equal(l.mapped, null);
    assert.equal(files.mappedCount, 1);
    for (const [f, n] of [[s, MAP_MAX], [l, MAP_MAX + 1]] as const) {
      const buf = new Uint8Array(1000);
      assert.ok(files.read(f, buf, n - 1000));
      assert.deepEqual(buf, bytes(n).subarray(n - 1000));
      // Past the end: a short read, never a fault.
      assert.equal(files.read(f, buf, n - 999), false);
    }
    // Removed: the mapping stays whole (its pages are the old file's) until it is dropped.
    Deno.removeSync(`${dir}/small`);
    const buf = new Uint8Array(16);
    assert.ok(files.read(s, buf, 32));
    assert.deepEqual(buf, bytes(MAP_MAX).subarray(32, 48));
    files.drop(`${dir}/small`);
    assert.equal(files.mappedCount, 0);
    assert.equal(files.size, 1);
  } finally {
    files.closeAll();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("OpenFiles (libc): a mapped file truncated in place by another process is let go first", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-files-" });
  const files = new OpenFiles<string>(4, "libc");
  try {
    const p = `${dir}/a`;
    Deno.writeFileSync(p, new Uint8Array(20_000).fill(7));
    const f = files.get(p, 1)!;
    assert.ok(f.mapped !== null);
    // The truncation waits in the kernel until the lease is given up, on SIGIO, here.
    const out = await new Deno.Command("sh", { args: ["-c", `: > ${p}`] }).output();
    assert.ok(out.success);
    assert.equal(files.size, 0);
    assert.equal(Deno.statSync(p).size, 0);
    const g = files.get(p, 2)!;
    assert.equal(g.size, 0);
    assert.equal(files.read(g, new Uint8Array(1), 0), false);
  } finally {
    files.closeAll();
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * Read leases this process holds on `paths` (Linux's /proc/locks, read by `cat`). Only those
 * files: the whole suite runs test files in one process, and other files' caches hold leases.
 */
async function leases(...paths: string[]): Promise<number> {
  // /proc/locks names a file as MAJOR:MINOR:INODE, the device numbers in hex.
  const ids = new Set(paths.map((p) => {
    const { dev, ino } = Deno.statSync(p);
    const major = (dev >>> 8) & 0xfff; // glibc's encoding of st_dev, below 2^32
    const minor = (dev & 0xff) | ((dev >>> 12) & 0xfff00);
    const hex = (n: number) => n.toString(16).padStart(2, "0");
    return `${hex(major)}:${hex(minor)}:${ino}`;
  }));
  const out = await new Deno.Command("cat", { args: ["/proc/locks"] }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) => {
    const f = l.trim().split(/\s+/);
    return / LEASE .* READ /.test(l) && f[4] === String(Deno.pid) && ids.has(f[5]);
  }).length;
}

Deno.test("OpenFiles (libc): only a mapped file keeps its read lease", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-files-" });
  const mapped = new OpenFiles<string>(4, "libc");
  const failing = new OpenFiles<string>(4, "libc", (c) => ({ ...c, map: () => null }));
  try {
    Deno.writeFileSync(`${dir}/a`, new Uint8Array(100));
    Deno.writeFileSync(`${dir}/b`, new Uint8Array(MAP_MAX + 1));
    assert.ok(mapped.get(`${dir}/a`, 1)!.mapped !== null);
    const ours = [`${dir}/a`, `${dir}/b`];
    assert.equal(await leases(...ours), 1);
    // Too large to map: never leased. A mapping that fails: the lease is given back.
    assert.equal(mapped.get(`${dir}/b`, 1)!.mapped, null);
    const f = failing.get(`${dir}/a`, 1)!;
    assert.equal(f.mapped, null);
    assert.equal(await leases(...ours), 1);
    // Read with pread all the same.
    assert.ok(failing.read(f, new Uint8Array(100), 0));
    mapped.closeAll();
    assert.equal(await leases(...ours), 0);
  } finally {
    mapped.closeAll();
    failing.closeAll();
    await Deno.remove(dir, { recursive: true });
  }
});
