/**
 * Memory and reloads: the byte budget holds with real answers (RSS grows by at most the budget
 * plus a stated overhead), least recently used entries go first, and a reload keeps the store
 * but drops the entries of applications whose cache was removed.
 */
import assert from "node:assert/strict";
import { processReleaser } from "../src/observe/memory_release.ts";
import {
  adminFetch,
  get,
  members,
  proxy,
  scalwsYaml,
  scriptedMember,
  startScalwsd,
} from "./_support/mod.ts";

const MiB = 1024 * 1024;
/**
 * What RSS may grow by beyond the budget, measured after a full GC and malloc_trim: heap
 * slack, allocator fragmentation, connection buffers (stated here; docs/cache.md says the same).
 */
const OVERHEAD = 24 * MiB;
const releaser = processReleaser();

Deno.test("the byte budget holds past max_size, RSS stays within it plus the overhead, LRU goes first", async () => {
  const size = 256 * 1024;
  await using m = scriptedMember((req) => ({
    body: new Uint8Array(size).fill(new URL(req.url).pathname.length),
    headers: { "cache-control": "max-age=600" },
  }));
  await using s = await startScalwsd(
    scalwsYaml({
      server: { cache: { max_size: "16MiB" } },
      upstreams: { p: { members: members(m) } },
      apps: [{ name: "a", domains: ["a.test"], runtime: proxy("p"), cache: {} }],
    }),
  );
  const store = s.server.cache.store;
  const settled = async () => {
    for (let i = 0; i < 3; i++) {
      releaser.release();
      await new Promise((r) => setTimeout(r, 400));
    }
    return Deno.memoryUsage().rss;
  };
  // A warm-up round first, so the baseline holds the allocator's and V8's own growth.
  for (let i = 0; i < 80; i++) await get(s.url + `/warm/${i}`, { host: "a.test" });
  store.purge({ all: true });
  store.evictions = 0;
  const rss0 = await settled();
  const hot = ["/o/0", "/o/1", "/o/2", "/o/3"];
  for (let i = 0; i < 160; i++) {
    const r = await get(s.url + `/o/${i}`, { host: "a.test" });
    assert.equal(r.bytes.length, size);
    // The first four stay in use all along.
    if (i >= 4 && i % 8 === 0) { for (const h of hot) await get(s.url + h, { host: "a.test" }); }
    assert.ok(store.bytes <= 16 * MiB, `store holds ${store.bytes} bytes`);
  }
  const growth = await settled() - rss0;
  console.log(
    `RSS ${(rss0 / MiB).toFixed(1)} MiB, growth ${(growth / MiB).toFixed(1)} MiB, ${
      (store.bytes / MiB).toFixed(1)
    } MiB stored`,
  );
  assert.ok(growth <= 16 * MiB + OVERHEAD, `RSS grew by ${(growth / MiB).toFixed(1)} MiB`);
  assert.ok(store.objects >= 50 && store.objects <= 64, `${store.objects} objects`);
  assert.ok(store.evictions >= 96);
  const held = (p: string) => store.variants(`http://a.test${p}`) !== undefined;
  for (const h of hot) assert.ok(held(h), `${h} was used recently and is kept`);
  assert.equal(held("/o/4"), false, "the least recently used went first");
  assert.equal(held("/o/159"), true);
  const order = [...store.lru()].map((e) => e.key);
  assert.equal(order[order.length - 1], "http://a.test/o/159");
  const metrics = await (await adminFetch(s.adminSocket, "/metrics")).text();
  assert.match(metrics, new RegExp(`^scalws_cache_evictions_total ${store.evictions}$`, "m"));
  assert.match(metrics, new RegExp(`^scalws_cache_objects ${store.objects}$`, "m"));
});

Deno.test("a reload keeps the store and drops the entries of applications whose cache was removed", async () => {
  await using m = scriptedMember((req) => ({
    body: new URL(req.url).pathname,
    headers: { "cache-control": "max-age=600" },
  }));
  const yaml = (bCache: boolean) =>
    scalwsYaml({
      upstreams: { p: { members: members(m) } },
      apps: [
        { name: "a", domains: ["a.test"], runtime: proxy("p"), cache: {} },
        { name: "b", domains: ["b.test"], runtime: proxy("p"), ...(bCache ? { cache: {} } : {}) },
      ],
    });
  await using s = await startScalwsd(yaml(true));
  await get(s.url + "/x", { host: "a.test" });
  await get(s.url + "/x", { host: "b.test" });
  assert.equal(s.server.cache.store.objects, 2);
  assert.equal((await s.server.reload()).ok, true);
  const hit = await get(s.url + "/x", { host: "a.test" });
  assert.match(hit.headers.get("cache-status")!, /^scalwsd; hit/);
  assert.equal(s.server.cache.store.objects, 2);
  await s.write(yaml(false));
  assert.equal((await s.server.reload()).ok, true);
  assert.equal(s.server.cache.store.objects, 1);
  assert.ok(s.server.cache.store.variants("http://a.test/x") !== undefined);
  const b = await get(s.url + "/x", { host: "b.test" });
  assert.equal(b.headers.get("cache-status"), null);
  assert.equal(m.count, 3);
});
