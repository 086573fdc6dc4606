/**
 * The disk tier (`server.cache.path`) end to end: an answer stored by one scalwsd is served by
 * the next one on the same path without a member request (`hit-disk` in the access log,
 * `scalws_cache_hits_total{tier="disk"}`), then from memory; a truncated file is a miss and is
 * replaced; a purge empties the disk too; a directory it cannot write in costs no answer.
 */
import assert from "node:assert/strict";
import {
  adminFetch,
  get,
  scriptedMember,
  startScalwsd,
  tempDir,
  waitUntil,
} from "./_support/mod.ts";
import { cachedApp } from "./_support/cache.ts";
import { nameOf } from "../src/cache/disk_format.ts";

const h = { host: "a.test" };

/** The file of `url`'s answer under `root`. */
const fileOf = (root: string, url: string) => {
  const n = nameOf(url);
  return `${root}/v1/${n.slice(0, 2)}/${n}`;
};

const exists = (p: string) => {
  try {
    Deno.statSync(p);
    return true;
  } catch {
    return false;
  }
};

Deno.test("disk tier: kept across restarts, read back, memory in front, corrupt files, purge, write failures", async (t) => {
  await using m = scriptedMember((req) => ({
    body: new URL(req.url).pathname === "/big" ? "b".repeat(20_000) : "small",
    headers: { "cache-control": "max-age=600" },
  }));
  await using dir = await tempDir();
  const root = `${dir.path}/cache`;
  const yaml = (maxSize: string) =>
    cachedApp(m, {}, { server: { cache: { path: root, max_size: maxSize } } });
  const log = `${dir.path}/access.log`;

  await t.step("stored on disk by one scalwsd, served by the next one", async () => {
    {
      await using s = await startScalwsd(yaml("1MiB"));
      assert.equal((await get(s.url + "/x", h)).text, "small");
      await waitUntil(() => exists(fileOf(root, "http://a.test/x")), {
        what: "the file",
        intervalMs: 10,
      });
    }
    await using s = await startScalwsd(yaml("1MiB"), { accessLog: log });
    const r = await get(s.url + "/x", h);
    assert.equal(r.text, "small");
    assert.match(r.headers.get("cache-status")!, /^scalwsd; hit; ttl=(599|600)$/);
    assert.equal(m.count, 1);
    assert.equal((await get(s.url + "/x", h)).text, "small"); // now from memory
    assert.equal(m.count, 1);
    const metrics = await (await adminFetch(s.adminSocket, "/metrics")).text();
    for (
      const line of [
        'scalws_cache_hits_total{tier="memory"} 1',
        'scalws_cache_hits_total{tier="disk"} 1',
        "scalws_cache_store_errors_total 0",
      ]
    ) assert.ok(metrics.split("\n").includes(line), line);
    // Measured once each process starts.
    await waitUntil(async () => {
      const text = await (await adminFetch(s.adminSocket, "/metrics")).text();
      return /^scalws_cache_disk_entries 1$/m.test(text) &&
        /^scalws_cache_disk_bytes [1-9]\d*$/m.test(text);
    }, { what: "the disk measured", intervalMs: 10 });
    await s.close();
    const lines = Deno.readTextFileSync(log).trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.cache), ["hit-disk", "hit"]);
  });

  await t.step("a memory tier too small for an answer: every hit reads the disk", async () => {
    await using s = await startScalwsd(yaml("4KiB"));
    const before = m.count;
    assert.equal((await get(s.url + "/big", h)).text.length, 20_000);
    await waitUntil(() => exists(fileOf(root, "http://a.test/big")), {
      what: "the file",
      intervalMs: 10,
    });
    for (let i = 0; i < 3; i++) {
      const r = await get(s.url + "/big", h);
      assert.equal(r.text.length, 20_000);
      assert.match(r.headers.get("cache-status")!, /^scalwsd; hit/);
    }
    assert.equal(m.count, before + 1);
    // A truncated file is a miss, removed, and stored again by the member's answer. Truncated
    // in place by another process: this one (scalwsd runs in it) holds a read lease on the
    // file it mapped, and a truncation of its own would wait for itself (45 s, until the kernel
    // breaks the lease).
    const file = fileOf(root, "http://a.test/big");
    const b = Deno.readFileSync(file);
    const copy = `${dir.path}/big.copy`;
    Deno.writeFileSync(copy, b.subarray(0, b.length - 100));
    const cut = await new Deno.Command("sh", { args: ["-c", 'cat "$1" > "$2"', "sh", copy, file] })
      .output();
    assert.ok(cut.success);
    const r = await get(s.url + "/big", h);
    assert.equal(r.text.length, 20_000);
    assert.match(r.headers.get("cache-status")!, /fwd=uri-miss; fwd-status=200; stored/);
    assert.equal(m.count, before + 2);
    await waitUntil(() => exists(file) && Deno.statSync(file).size === b.length, {
      what: "the file again",
      intervalMs: 10,
    });
    assert.match((await get(s.url + "/big", h)).headers.get("cache-status")!, /^scalwsd; hit/);
    assert.ok(s.logs.some((l) => l.includes('"cache_disk_corrupt"')));
  });

  await t.step("a purge through the admin API empties the disk as well", async () => {
    await using s = await startScalwsd(yaml("1MiB"));
    const res = await adminFetch(s.adminSocket, "/v1/cache/purge", {
      method: "POST",
      body: JSON.stringify({ host: "a.test", path: "/x" }),
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { purged: 1 });
    assert.equal(exists(fileOf(root, "http://a.test/x")), false);
    assert.equal(exists(fileOf(root, "http://a.test/big")), true);
    const before = m.count;
    await get(s.url + "/x", h);
    assert.equal(m.count, before + 1);
  });

  await t.step(
    "a directory it cannot write in: answers served, not stored, counted, one warning",
    async () => {
      Deno.removeSync(`${root}/v1/tmp`, { recursive: true });
      Deno.writeTextFileSync(`${root}/v1/tmp`, "");
      await using s = await startScalwsd(yaml("4KiB"));
      for (let i = 0; i < 3; i++) {
        const r = await get(s.url + `/w${i}`, h);
        assert.equal(r.status, 200);
        assert.equal(r.text, "small");
      }
      await waitUntil(async () => {
        const metrics = await (await adminFetch(s.adminSocket, "/metrics")).text();
        return metrics.split("\n").includes("scalws_cache_store_errors_total 3");
      }, { what: "the failures counted", intervalMs: 10 });
      // One warning in the minute: here the one at start, that tmp/ cannot be made.
      const warnings = s.logs.filter((l) => /"level":"warn","event":"cache_disk_/.test(l));
      assert.equal(warnings.length, 1, warnings.join("\n"));
      assert.match(warnings[0], /"cache_disk_unusable"/);
    },
  );
});
