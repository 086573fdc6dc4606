import assert from "node:assert/strict";
import { ValueError } from "./errors.ts";
import { parseSize } from "./size.ts";

Deno.test("parseSize reads bytes and decimal and binary units", () => {
  const cases: [string | number, number][] = [
    ["10MiB", 10_485_760],
    ["64KiB", 65_536],
    ["1MB", 1_000_000],
    ["1KB", 1_000],
    ["2GiB", 2_147_483_648],
    ["1TB", 1e12],
    ["512", 512],
    ["512B", 512],
    [512, 512],
    [0, 0],
  ];
  for (const [input, bytes] of cases) assert.equal(parseSize(input), bytes, String(input));
});

Deno.test("parseSize refuses guesses, fractions and negative numbers", () => {
  const units =
    "use bytes or a unit B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, like 512, 64KiB or 10MiB";
  const cases: [string | number, string][] = [
    ["10m", `invalid size "10m": ${units}`],
    ["10mib", `invalid size "10mib": ${units}`],
    ["1.5MiB", `invalid size "1.5MiB": ${units}`],
    ["10 MiB", `invalid size "10 MiB": ${units}`],
    ["", `invalid size "": ${units}`],
    [-1, "invalid size -1: must be a whole number of bytes, or a unit like 64KiB or 10MiB"],
    [1.5, "invalid size 1.5: must be a whole number of bytes, or a unit like 64KiB or 10MiB"],
    ["9999999999999999TiB", 'invalid size "9999999999999999TiB": too large'],
  ];
  for (const [input, message] of cases) {
    assert.throws(() => parseSize(input), new ValueError(message), String(input));
  }
});
