/**
 * The disk tier's byte budget end to end (issue 26, item 1): `server.cache.disk_max_size` holds
 * the files under `server.cache.path` within it, least recently used going first, and the
 * eviction is done by one process of the host at a time: while another holds the directory's
 * `evict.lock`, this one removes nothing; once it is released the next write trims. And a disk
 * that is really full (a small tmpfs, where the test may mount one): answers are served whole
 * and not stored, `scalws_cache_store_errors_total` counts them, one warning, no leftovers.
 */
import assert from "node:assert/strict";
import {
  adminFetch,
  get,
  scriptedMember,
  sleep,
  startScalwsd,
  tempDir,
  waitUntil,
} from "./_support/mod.ts";
import { cachedApp } from "./_support/cache.ts";

const h = { host: "a.test" };
const BUDGET = 100 * 1024;

/** Bytes of the answers' files (the shard directories `XX/`), and how many. */
function onDisk(root: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  for (const shard of Deno.readDirSync(`${root}/v1`)) {
    if (!shard.isDirectory || !/^[0-9a-f]{2}$/.test(shard.name)) continue;
    for (const f of Deno.readDirSync(`${root}/v1/${shard.name}`)) {
      bytes += Deno.statSync(`${root}/v1/${shard.name}/${f.name}`).size;
      files++;
    }
  }
  return { bytes, files };
}

/** How long to wait for the store: past its periodic check (every 5 s). */
const WAIT = { timeoutMs: 8_000, intervalMs: 20 };

Deno.test("disk tier: disk_max_size holds, least recently used first, one evicting process at a time", async () => {
  await using m = scriptedMember(() => ({
    body: "z".repeat(20_000),
    headers: { "cache-control": "max-age=600" },
  }));
  await using dir = await tempDir();
  const root = `${dir.path}/cache`;
  await using s = await startScalwsd(cachedApp(m, { max_object_size: "64KiB" }, {
    // A memory tier too small for the answers: what is served again comes from the disk.
    server: { cache: { path: root, max_size: "8KiB", disk_max_size: "100KiB" } },
  }));
  for (let i = 0; i < 30; i++) assert.equal((await get(`${s.url}/f${i}`, h)).status, 200);
  // The files, and the metric once the trim that removed them has counted what is left.
  const diskBytes = async () => {
    const text = await (await adminFetch(s.adminSocket, "/metrics")).text();
    return Number(/^scalws_cache_disk_bytes (\d+)$/m.exec(text)?.[1]);
  };
  await waitUntil(async () => {
    const bytes = await diskBytes();
    return onDisk(root).bytes <= BUDGET && bytes > 0 && bytes <= BUDGET;
  }, { what: "the budget held", ...WAIT });
  const kept = onDisk(root);
  assert.ok(kept.files >= 3, `${kept.files} files kept`);
  // The last one written is still there, the first one went.
  const before = m.count;
  assert.match((await get(`${s.url}/f29`, h)).headers.get("cache-status")!, /; hit/);
  assert.equal(m.count, before);
  assert.match((await get(`${s.url}/f0`, h)).headers.get("cache-status")!, /stored/);
  assert.equal(m.count, before + 1);

  // Another process of the host is evicting (a fresh evict.lock): this one leaves the files.
  const lock = `${root}/v1/evict.lock`;
  Deno.writeTextFileSync(lock, `1 ${Date.now()} other`);
  for (let i = 30; i < 40; i++) assert.equal((await get(`${s.url}/f${i}`, h)).status, 200);
  await sleep(200);
  assert.ok(onDisk(root).bytes > BUDGET, "trimmed while another process held evict.lock");
  assert.equal(Deno.readTextFileSync(lock).split(" ")[2], "other");
  // Released: the next write trims again.
  Deno.removeSync(lock);
  await get(`${s.url}/f40`, h);
  await waitUntil(() => onDisk(root).bytes <= BUDGET, {
    what: "the budget held again",
    ...WAIT,
  });
});

/** Mounts a tmpfs of `size` on `dir`; false where this process may not (not root, no mount). */
async function mountTmpfs(dir: string, size: string): Promise<boolean> {
  if (Deno.uid() !== 0) return false;
  const out = await new Deno.Command("mount", {
    args: ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir],
    stdout: "null",
    stderr: "null",
  }).output().catch(() => null);
  return out?.success === true;
}

Deno.test("disk tier on a full disk (a 64 KiB tmpfs): answers served, not stored, counted, one warning", async (t) => {
  await using dir = await tempDir();
  const mnt = `${dir.path}/small`;
  Deno.mkdirSync(mnt);
  if (!await mountTmpfs(mnt, "64k")) {
    await t.step({ name: "needs root and mount (skipped)", ignore: true, fn: () => {} });
    return;
  }
  try {
    await using m = scriptedMember((req) => ({
      body: `${new URL(req.url).pathname} `.repeat(4000),
      headers: { "cache-control": "max-age=600" },
    }));
    await using s = await startScalwsd(cachedApp(m, { max_object_size: "64KiB" }, {
      server: { cache: { path: `${mnt}/cache`, max_size: "8KiB" } },
    }));
    for (let i = 0; i < 8; i++) {
      const r = await get(`${s.url}/f${i}`, h);
      assert.equal(r.status, 200);
      assert.equal(r.text, `/f${i} `.repeat(4000));
    }
    await waitUntil(async () => {
      const text = await (await adminFetch(s.adminSocket, "/metrics")).text();
      return Number(/^scalws_cache_store_errors_total (\d+)$/m.exec(text)?.[1]) >= 4;
    }, { what: "the failed stores counted", ...WAIT });
    const warnings = s.logs.filter((l) => l.includes('"cache_disk_store_failed"'));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /No space left on device/);
    // What did not fit is asked of the member again, and answered whole.
    const before = m.count;
    assert.equal((await get(`${s.url}/f7`, h)).text, "/f7 ".repeat(4000));
    assert.equal(m.count, before + 1);
    // The failed writes leave nothing behind (the last one may still be under way).
    await waitUntil(() => [...Deno.readDirSync(`${mnt}/cache/v1/tmp`)].length === 0, {
      what: "tmp/ empty",
      ...WAIT,
    });
  } finally {
    await new Deno.Command("umount", { args: ["-l", mnt] }).output();
  }
});

Deno.test("disk tier metrics follow a purge at once, not at the next measurement", async () => {
  await using m = scriptedMember(() => ({
    body: "answer",
    headers: { "cache-control": "max-age=600" },
  }));
  await using dir = await tempDir();
  await using s = await startScalwsd(cachedApp(m, {}, {
    server: { cache: { path: `${dir.path}/cache` } },
  }));
  const disk = async () => {
    const text = await (await adminFetch(s.adminSocket, "/metrics")).text();
    const of = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(text)?.[1]);
    return [of("scalws_cache_disk_entries"), of("scalws_cache_disk_bytes")];
  };
  await get(`${s.url}/a`, h);
  await get(`${s.url}/b`, h);
  await waitUntil(async () => (await disk())[0] === 2, {
    what: "two entries on disk",
    ...WAIT,
  });
  const [, two] = await disk();
  const res = await adminFetch(s.adminSocket, "/v1/cache/purge", {
    method: "POST",
    body: JSON.stringify({ host: "a.test", path: "/a" }),
  });
  assert.deepEqual(await res.json(), { purged: 1 });
  const [entries, bytes] = await disk();
  assert.equal(entries, 1);
  assert.equal(bytes, two / 2);
  await adminFetch(s.adminSocket, "/v1/cache/purge", {
    method: "POST",
    body: JSON.stringify({ all: true }),
  });
  assert.deepEqual(await disk(), [0, 0]);
});

Deno.test("disk tier on a read-only disk: answers served, each counted once, one warning a minute", async (t) => {
  await using dir = await tempDir();
  const mnt = `${dir.path}/ro`;
  Deno.mkdirSync(mnt);
  if (!await mountTmpfs(mnt, "64k,ro")) {
    await t.step({ name: "needs root and mount (skipped)", ignore: true, fn: () => {} });
    return;
  }
  try {
    await using m = scriptedMember(() => ({
      body: "answer",
      headers: { "cache-control": "max-age=600" },
    }));
    await using s = await startScalwsd(cachedApp(m, {}, {
      server: { cache: { path: `${mnt}/cache` } },
    }));
    for (let i = 0; i < 4; i++) {
      const r = await get(`${s.url}/r${i}`, h);
      assert.deepEqual([r.status, r.text], [200, "answer"]);
    }
    await waitUntil(async () => {
      const text = await (await adminFetch(s.adminSocket, "/metrics")).text();
      return /^scalws_cache_store_errors_total 4$/m.test(text);
    }, { what: "the failed stores counted", ...WAIT });
    await sleep(100);
    const text = await (await adminFetch(s.adminSocket, "/metrics")).text();
    assert.match(text, /^scalws_cache_store_errors_total 4$/m);
    const warnings = s.logs.filter((l) => /"level":"warn","event":"cache_disk_/.test(l));
    assert.equal(warnings.length, 1, warnings.join("\n"));
  } finally {
    await new Deno.Command("umount", { args: ["-l", mnt] }).output();
  }
});
