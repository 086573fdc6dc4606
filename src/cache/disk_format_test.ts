import assert from "node:assert/strict";
import { entryForTest } from "./_entry_for_test.ts";
import {
  decode,
  encodeAnswer,
  encodeIndex,
  HEADER_SIZE,
  keyOfHead,
  nameOf,
} from "./disk_format.ts";

const KEY = "https://a.test/x?y=1";

Deno.test("disk format: an answer reads back as the entry it was (body, head, times, selection)", () => {
  const e = entryForTest({
    size: 300,
    etag: '"v1"',
    select: [["accept-encoding", "gzip"], ["x-absent", null]],
    headers: [["content-type", "text/html"], ["date", "Thu, 01 Dec 1994 16:00:00 GMT"]],
  });
  e.body.fill(7);
  e.dateValue = NaN;
  const b = encodeAnswer(KEY, e);
  const d = decode(b);
  assert.equal(d.kind, "answer");
  if (d.kind !== "answer") return;
  assert.equal(d.key, KEY);
  assert.deepEqual(d.entry.headers, e.headers);
  assert.deepEqual([...d.entry.body], [...e.body]);
  assert.equal(d.entry.etag, '"v1"');
  assert.ok(Number.isNaN(d.entry.dateValue));
  assert.equal(d.entry.lifetime, 60);
  assert.deepEqual(d.entry.selectNames, ["accept-encoding", "x-absent"]);
  assert.deepEqual(d.entry.selectValues, ["gzip", null]);
  assert.equal(keyOfHead(b.slice(0, 1000)), KEY);
  assert.equal(keyOfHead(b.slice(0, 100)), null);
});

Deno.test("disk format: a variant index names its fields", () => {
  const d = decode(encodeIndex(KEY, ["accept-encoding"]));
  assert.deepEqual(d, { kind: "index", key: KEY, names: ["accept-encoding"] });
});

Deno.test("disk format: truncated, extended, altered or foreign files are corrupt", () => {
  const b = encodeAnswer(KEY, entryForTest({ size: 100 }));
  assert.equal(decode(b.slice(0, b.length - 1)).kind, "corrupt");
  assert.equal(decode(b.slice(0, 10)).kind, "corrupt");
  const longer = new Uint8Array(b.length + 1);
  longer.set(b);
  assert.equal(decode(longer).kind, "corrupt");
  const meta = b.slice();
  meta[HEADER_SIZE + 3] ^= 1;
  assert.equal(decode(meta).kind, "corrupt");
  const version = b.slice();
  version[4] = 2;
  assert.equal(decode(version).kind, "corrupt");
  assert.equal(decode(new TextEncoder().encode("hello world, not a cache file")).kind, "corrupt");
});

Deno.test("disk format: file names are 16 hex digits, stable, different for near keys", () => {
  assert.match(nameOf(KEY), /^[0-9a-f]{16}$/);
  assert.equal(nameOf(KEY), nameOf("https://a.test/x?y=1"));
  assert.notEqual(nameOf(KEY), nameOf("https://a.test/x?y=2"));
  const seen = new Set<string>();
  for (let i = 0; i < 10_000; i++) seen.add(nameOf(`https://a.test/p/${i}`));
  assert.equal(seen.size, 10_000);
});
