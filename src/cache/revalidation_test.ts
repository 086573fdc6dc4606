import assert from "node:assert/strict";
import { selects, updatedHeaders, validators, withMemberDate } from "./revalidation.ts";
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

Deno.test("withMemberDate stores the member's Date when the fields have none", () => {
  const d = "Thu, 01 Dec 1994 16:00:00 GMT";
  assert.deepEqual(withMemberDate([["etag", '"a"']], d), [["etag", '"a"'], ["date", d]]);
  const own: [string, string][] = [["date", "Fri, 02 Dec 1994 16:00:00 GMT"]];
  assert.deepEqual(withMemberDate(own, d), [["date", "Fri, 02 Dec 1994 16:00:00 GMT"]]);
  assert.deepEqual(withMemberDate([["etag", '"a"']], null), [["etag", '"a"']]);
});

Deno.test("a 304's Date (other-date-update) replaces the stored Date", () => {
  const stored: [string, string][] = [["date", "Thu, 01 Dec 1994 16:00:00 GMT"], ["x", "1"]];
  const fresh = withMemberDate([], "Fri, 02 Dec 1994 16:00:00 GMT");
  assert.deepEqual(updatedHeaders(stored, fresh), [
    ["x", "1"],
    ["date", "Fri, 02 Dec 1994 16:00:00 GMT"],
  ]);
});
