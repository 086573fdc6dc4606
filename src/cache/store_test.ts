import assert from "node:assert/strict";
import { MAX_VARIANTS, splitKey, Store } from "./store.ts";
import { entryForTest } from "./_entry_for_test.ts";

Deno.test("Store evicts least recently used entries past the byte budget", () => {
  const one = entryForTest({ size: 1000 });
  const size = 1000 + one.headBytes() + "http://h/0".length * 2 + 512;
  const store = new Store(size * 3);
  for (let i = 0; i < 3; i++) store.put(`http://h/${i}`, entryForTest({ size: 1000 }));
  assert.equal(store.objects, 3);
  // Using /0 makes /1 the least recently used.
  store.touch(store.variants("http://h/0")![0]);
  store.put("http://h/3", entryForTest({ size: 1000 }));
  assert.equal(store.objects, 3);
  assert.equal(store.variants("http://h/1"), undefined);
  assert.deepEqual([...store.lru()].map((e) => e.key), ["http://h/2", "http://h/0", "http://h/3"]);
  assert.equal(store.evictions, 1);
  assert.ok(store.bytes <= store.maxBytes);
});

Deno.test("Store refuses an entry larger than the whole budget", () => {
  const store = new Store(1000);
  assert.equal(store.put("http://h/x", entryForTest({ size: 2000 })), false);
  assert.equal(store.objects, 0);
  assert.equal(store.bytes, 0);
});

Deno.test("Store keeps one entry per selection and at most 32 variants per key", () => {
  const store = new Store(1 << 30);
  store.put("k://h/", entryForTest({ select: [["accept-encoding", "gzip"]] }));
  store.put("k://h/", entryForTest({ select: [["accept-encoding", "gzip"]] }));
  assert.equal(store.objects, 1);
  for (let i = 0; i < MAX_VARIANTS + 3; i++) {
    store.put("k://h/", entryForTest({ select: [["x-v", String(i)]] }));
  }
  const v = store.variants("k://h/")!;
  assert.equal(v.length, MAX_VARIANTS);
  assert.equal(v[0].selectValues[0], "3");
  assert.equal(store.objects, MAX_VARIANTS);
  assert.equal(store.evictions, 4);
});

Deno.test("Store.purge by exact path, by prefix, by host with any port, and all", () => {
  const store = new Store(1 << 30);
  for (
    const k of [
      "http://a.example/img/1",
      "https://a.example/img/2?x",
      "http://a.example:8080/img/3",
      "http://a.example/imgx",
      "http://a.example/x",
      "http://a.example/x?q=1",
      "http://b.example/img/1",
    ]
  ) store.put(k, entryForTest());
  assert.equal(store.purge({ host: "a.example", path: "/x?q=1" }), 1);
  assert.equal(store.purge({ host: "a.example", path: "/x?q=2" }), 0);
  store.put("http://a.example/x?q=1", entryForTest());
  assert.equal(store.purge({ host: "a.example", path: "/x" }), 2);
  assert.equal(store.purge({ host: "A.example", prefix: "/img/" }), 3);
  assert.equal(store.objects, 2);
  assert.equal(store.purge({ all: true }), 2);
  assert.equal(store.objects, 0);
  assert.equal(store.bytes, 0);
});

Deno.test("Store.dropOwners removes the entries of applications that lost their cache", () => {
  const store = new Store(1 << 30);
  store.put("http://a/1", entryForTest({ owner: "t/a" }));
  store.put("http://b/1", entryForTest({ owner: "t/b" }));
  assert.equal(store.dropOwners((o) => o === "t/b"), 1);
  assert.equal(store.owners.get("t/a"), undefined);
  assert.equal(store.owners.get("t/b")?.objects, 1);
});

Deno.test("splitKey gives host and path without the query", () => {
  assert.deepEqual(splitKey("https://a.example:8443/p/q?x=1"), {
    host: "a.example:8443",
    path: "/p/q",
  });
});

Deno.test("Store.touch of an entry it does not hold changes nothing", () => {
  const s = new Store(10_000);
  const a = entryForTest({ size: 100 });
  s.put("k", a);
  const outside = entryForTest({ size: 100 });
  s.touch(outside);
  assert.deepEqual([...s.lru()], [a]);
  assert.equal(s.objects, 1);
});
