import assert from "node:assert/strict";
import { selects, updatedHeaders, validators } from "./revalidation.ts";
import { entryForTest } from "./_entry_for_test.ts";

Deno.test("validators sends the stored ETag and Last-Modified", () => {
  const e = entryForTest({ etag: '"v1"' });
  e.lastModified = "Thu, 01 Jan 2026 00:00:00 GMT";
  assert.deepEqual(validators(e), [
    ["if-none-match", '"v1"'],
    ["if-modified-since", "Thu, 01 Jan 2026 00:00:00 GMT"],
  ]);
});

Deno.test("selects: a 304 with another strong ETag does not refresh the entry", () => {
  const e = entryForTest({ etag: '"v1"' });
  assert.equal(selects(e, '"v1"'), true);
  assert.equal(selects(e, null), true);
  assert.equal(selects(e, '"v2"'), false);
});

Deno.test("updatedHeaders replaces fields the 304 carries, keeps framing and the rest", () => {
  const stored: [string, string][] = [
    ["content-type", "text/html"],
    ["cache-control", "max-age=1"],
    ["x-a", "1"],
    ["x-a", "2"],
    ["content-length", "5"],
  ];
  const fresh: [string, string][] = [
    ["cache-control", "max-age=60"],
    ["x-a", "3"],
    ["content-length", "0"],
    ["set-cookie", "s=1"],
  ];
  assert.deepEqual(updatedHeaders(stored, fresh), [
    ["content-type", "text/html"],
    ["content-length", "5"],
    ["cache-control", "max-age=60"],
    ["x-a", "3"],
  ]);
});
