import assert from "node:assert/strict";
import { formatDuration, parseDuration } from "./duration.ts";
import { ValueError } from "./errors.ts";

Deno.test("parseDuration reads units and combinations into milliseconds", () => {
  const cases: [string | number, number][] = [
    [0, 0],
    ["0", 0],
    ["0s", 0],
    ["1ms", 1],
    ["10s", 10_000],
    ["30m", 1_800_000],
    ["12h", 43_200_000],
    ["1d", 86_400_000],
    ["3d", 259_200_000],
    ["1h30m", 5_400_000],
    ["1d2h3m4s5ms", 93_784_005],
    ["1.5h", 5_400_000],
    ["1.1s", 1_100],
    ["0.5s", 500],
  ];
  for (const [input, ms] of cases) assert.equal(parseDuration(input), ms, String(input));
});

Deno.test("parseDuration refuses bare numbers, unknown units and disordered parts", () => {
  const cases: [string | number, string][] = [
    [
      "10x",
      'invalid duration "10x": write a number and a unit (d, h, m, s, ms), like 10s, 500ms or 1h30m',
    ],
    [
      "",
      'invalid duration "": write a number and a unit (d, h, m, s, ms), like 10s, 500ms or 1h30m',
    ],
    [
      "s",
      'invalid duration "s": write a number and a unit (d, h, m, s, ms), like 10s, 500ms or 1h30m',
    ],
    [
      "10",
      'invalid duration "10": write a number and a unit (d, h, m, s, ms), like 10s, 500ms or 1h30m',
    ],
    [
      "-1s",
      'invalid duration "-1s": write a number and a unit (d, h, m, s, ms), like 10s, 500ms or 1h30m',
    ],
    [
      " 1s",
      'invalid duration " 1s": write a number and a unit (d, h, m, s, ms), like 10s, 500ms or 1h30m',
    ],
    [
      "1s ",
      'invalid duration "1s ": write a number and a unit (d, h, m, s, ms), like 10s, 500ms or 1h30m',
    ],
    [
      "10us",
      'invalid duration "10us": write a number and a unit (d, h, m, s, ms), like 10s, 500ms or 1h30m',
    ],
    ["30m1h", 'invalid duration "30m1h": units must go from largest to smallest, each once'],
    ["1m1m", 'invalid duration "1m1m": units must go from largest to smallest, each once'],
    ["0.5ms", 'invalid duration "0.5ms": finer than 1ms'],
    [30, 'invalid duration 30: a duration needs a unit, for example "30s"'],
    [1.5, 'invalid duration 1.5: a duration needs a unit, for example "1.5s"'],
    [-1, "invalid duration -1: must not be negative"],
  ];
  for (const [input, message] of cases) {
    assert.throws(() => parseDuration(input), new ValueError(message), String(input));
  }
});

Deno.test("formatDuration uses the largest whole unit", () => {
  assert.equal(formatDuration(3_600_000), "1h");
  assert.equal(formatDuration(1), "1ms");
  assert.equal(formatDuration(90_000), "90s");
  assert.equal(formatDuration(1_500), "1500ms");
  assert.equal(formatDuration(172_800_000), "2d");
});
