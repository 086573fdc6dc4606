import assert from "node:assert/strict";
import { ManualClock } from "../base/clock.ts";
import { Registry } from "../observe/metrics.ts";
import { Cache, CacheCounters, COLLAPSED, HIT, hitRatio, MISS } from "./cache.ts";
import { entryForTest } from "./_entry_for_test.ts";
import { mappings } from "./_maps_for_test.ts";

Deno.test("hitRatio counts answers from the cache over looked-up requests", () => {
  const r = { hit: 6, miss: 2, stale: 1, revalidated: 0, bypass: 50, collapsed: 1 };
  assert.equal(hitRatio(r), 0.8);
  assert.equal(hitRatio({ hit: 0, miss: 0, stale: 0, revalidated: 0, bypass: 3, collapsed: 0 }), 0);
});

Deno.test("Cache.stats reports objects, bytes and hit ratio per application", () => {
  const family = new Registry().counter("scalws_cache_requests_total", "x", [
    "tenant",
    "app",
    "result",
  ]);
  const cache = new Cache(1 << 20, new ManualClock(), family);
  const c = new CacheCounters("t", "a", family);
  c.count(HIT);
  c.count(HIT);
  c.count(COLLAPSED);
  c.count(MISS);
  cache.store.put("http://a.test/x", entryForTest({ owner: "t/a", size: 100 }));
  cache.store.put("http://b.test/x", entryForTest({ owner: "t/b", size: 100 }));
  const s = cache.stats();
  assert.equal(s.objects, 2);
  assert.equal(s.hit_ratio, 0.75);
  assert.deepEqual(s.applications.map((a) => [a.app, a.objects, a.hit_ratio]), [
    ["a", 1, 0.75],
    ["b", 1, 0],
  ]);
  assert.equal(s.applications[0].requests.hit, 2);
  assert.equal(s.bytes, s.applications[0].bytes + s.applications[1].bytes);
});

Deno.test("Cache.setDisk: a new path unmaps the old tier's epoch; no path unmaps it too", async () => {
  const a = await Deno.makeTempDir({ prefix: "scalwsd-tier-" });
  const b = await Deno.makeTempDir({ prefix: "scalwsd-tier-" });
  const maps = (root: string) => mappings(`${root}/v1/epoch`);
  const cache = new Cache(1 << 20, new ManualClock());
  try {
    cache.setDisk(a, 1 << 20);
    assert.equal(await maps(a), 1);
    cache.setDisk(a, 2 << 20); // the same path: kept
    assert.equal(await maps(a), 1);
    for (let i = 0; i < 3; i++) {
      cache.setDisk(b, 1 << 20);
      assert.deepEqual([await maps(a), await maps(b)], [0, 1]);
      cache.setDisk(a, 1 << 20);
      assert.deepEqual([await maps(a), await maps(b)], [1, 0]);
    }
    cache.setDisk(undefined, 0);
    assert.deepEqual([await maps(a), await maps(b)], [0, 0]);
  } finally {
    cache.setDisk(undefined, 0);
    await Deno.remove(a, { recursive: true });
    await Deno.remove(b, { recursive: true });
  }
});
