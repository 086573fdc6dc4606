import assert from "node:assert/strict";
import { formatHttpDate, parseHttpDate } from "./http_date.ts";

const T = Date.UTC(1994, 10, 6, 8, 49, 37);

Deno.test("parseHttpDate reads IMF-fixdate, RFC 850 and asctime", () => {
  assert.equal(parseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT"), T);
  assert.equal(parseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT"), T);
  assert.equal(parseHttpDate("Sun Nov  6 08:49:37 1994"), T);
});

Deno.test("parseHttpDate refuses anything else", () => {
  for (
    const bad of [
      "0",
      "-1",
      "",
      "Sun, 06 Nov 1994 08:49:37 UTC",
      "Sun, 31 Feb 1994 08:49:37 GMT",
      "Xyz, 06 Nov 1994 08:49:37 GMT",
      "Sun, 06 Nov 1994 25:49:37 GMT",
      "2024-01-01T00:00:00Z",
    ]
  ) assert.ok(Number.isNaN(parseHttpDate(bad)), bad);
  assert.ok(Number.isNaN(parseHttpDate(null)));
});

Deno.test("formatHttpDate round-trips", () => {
  assert.equal(formatHttpDate(T), "Sun, 06 Nov 1994 08:49:37 GMT");
  assert.equal(parseHttpDate(formatHttpDate(T)), T);
});

Deno.test("parseHttpDate takes the first of a repeated field joined with a comma", () => {
  assert.equal(
    parseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT"),
    T,
  );
});

Deno.test("parseHttpDate accepts any letter case in names (RFC 9110 5.6.7)", () => {
  const D = Date.UTC(1994, 11, 1, 16, 0, 0);
  assert.equal(parseHttpDate("THU, 01 DEC 1994 16:00:00 gmt"), D);
  assert.equal(parseHttpDate("thu, 01 dec 1994 16:00:00 GMT"), D);
  assert.equal(parseHttpDate("tHu, 01 dEc 1994 16:00:00 Gmt"), D);
  assert.equal(parseHttpDate("THURSDAY, 01-DEC-94 16:00:00 gmt"), D);
  assert.equal(parseHttpDate("thu dec  1 16:00:00 1994"), D);
  // Names still have to be names, in whatever case.
  assert.ok(Number.isNaN(parseHttpDate("THX, 01 DEC 1994 16:00:00 GMT")));
  assert.ok(Number.isNaN(parseHttpDate("Thu, 01 DCE 1994 16:00:00 GMT")));
  assert.ok(Number.isNaN(parseHttpDate("Thu, 01 Dec 1994 16:00:00 GMX")));
});
