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
