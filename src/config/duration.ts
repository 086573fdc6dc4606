/**
 * Durations in the configuration: `10s`, `500ms`, `1h30m` (units d, h, m, s, ms) or a number of
 * seconds, parsed into milliseconds, and formatted back for messages and views. Refuses what it
 * does not understand with a `ValueError`.
 *
 * @module
 */

import { ValueError } from "./errors.ts";

const UNIT_MS: Readonly<Record<string, number>> = {
  d: 86_400_000,
  h: 3_600_000,
  m: 60_000,
  s: 1_000,
  ms: 1,
};
const UNIT_RANK: Readonly<Record<string, number>> = { d: 0, h: 1, m: 2, s: 3, ms: 4 };
// `ms` must come before `m` so that `5ms` is not read as 5 minutes followed by `s`.
const COMPONENT = /([0-9]{1,15})(?:\.([0-9]{1,6}))?(ms|d|h|m|s)/y;

/** What a duration looks like, for error messages. */
const DURATION_HINT = "write a number and a unit (d, h, m, s, ms), like 10s, 500ms or 1h30m";

/**
 * Parses a duration into milliseconds.
 *
 * A string is one or more `<number><unit>` parts with units `d`, `h`, `m`, `s`, `ms` in
 * descending order, each at most once: `0s`, `1ms`, `10s`, `30m`, `12h`, `3d`, `1h30m`,
 * `1.5h`. A fraction must come out as whole milliseconds. The bare string `"0"` and the
 * number `0` mean zero; any other number is refused, since `30` could mean seconds or
 * milliseconds. Throws a `ValueError` such as `invalid duration "10x"`.
 */
export function parseDuration(value: string | number): number {
  if (typeof value === "number") {
    if (value === 0) return 0;
    if (value < 0) throw new ValueError(`invalid duration ${value}: must not be negative`);
    throw new ValueError(
      `invalid duration ${value}: a duration needs a unit, for example "${value}s"`,
    );
  }
  if (value === "0") return 0;
  let total = 0;
  let at = 0;
  let lastRank = -1;
  while (at < value.length) {
    COMPONENT.lastIndex = at;
    const m = COMPONENT.exec(value);
    if (m === null) throw new ValueError(`invalid duration "${value}": ${DURATION_HINT}`);
    const unit = m[3];
    const rank = UNIT_RANK[unit];
    if (rank <= lastRank) {
      throw new ValueError(
        `invalid duration "${value}": units must go from largest to smallest, each once`,
      );
    }
    lastRank = rank;
    const ms = UNIT_MS[unit];
    total += Number(m[1]) * ms;
    if (m[2] !== undefined) {
      // Integer arithmetic: 1.1s must be exactly 1100 ms, not 1100.0000000000002.
      const scale = 10 ** m[2].length;
      const scaled = Number(m[2]) * ms;
      if (scaled % scale !== 0) {
        throw new ValueError(`invalid duration "${value}": finer than 1ms`);
      }
      total += scaled / scale;
    }
    at = COMPONENT.lastIndex;
  }
  if (at === 0) throw new ValueError(`invalid duration "${value}": ${DURATION_HINT}`);
  if (!Number.isSafeInteger(total)) throw new ValueError(`invalid duration "${value}": too long`);
  return total;
}

/** Formats milliseconds the way durations are written (`1h`, `1500ms`, `90s`) for messages. */
export function formatDuration(ms: number): string {
  for (const unit of ["d", "h", "m", "s"]) {
    const size = UNIT_MS[unit];
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
