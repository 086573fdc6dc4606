/**
 * Sizes in the configuration (`512`, `64KiB`, `10MB`): decimal and binary units written exactly,
 * parsed into bytes; nginx's `10m` is refused, not guessed at.
 *
 * @module
 */

import { ValueError } from "./errors.ts";

const UNIT_BYTES: Readonly<Record<string, number>> = {
  B: 1,
  KB: 1_000,
  MB: 1_000_000,
  GB: 1_000_000_000,
  TB: 1_000_000_000_000,
  KiB: 1024,
  MiB: 1024 ** 2,
  GiB: 1024 ** 3,
  TiB: 1024 ** 4,
};
const SIZE = /^([0-9]{1,16})(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)?$/;

/**
 * Parses a size into bytes: a whole number of bytes (`512`, `"512"`) or a whole number with a
 * unit, decimal `B`, `KB`, `MB`, `GB`, `TB` or binary `KiB`, `MiB`, `GiB`, `TiB`, written
 * exactly so (`10MiB`, `64KiB`, `1MB`). nginx's `10m` is refused rather than guessed at.
 * Throws a `ValueError` such as `invalid size "10m"`.
 */
export function parseSize(value: string | number): number {
  if (typeof value === "number") {
    if (Number.isSafeInteger(value) && value >= 0) return value;
    throw new ValueError(
      `invalid size ${value}: must be a whole number of bytes, or a unit like 64KiB or 10MiB`,
    );
  }
  const m = SIZE.exec(value);
  if (m === null) {
    throw new ValueError(
      `invalid size "${value}": use bytes or a unit B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, ` +
        "like 512, 64KiB or 10MiB",
    );
  }
  const bytes = Number(m[1]) * UNIT_BYTES[m[2] ?? "B"];
  if (!Number.isSafeInteger(bytes)) throw new ValueError(`invalid size "${value}": too large`);
  return bytes;
}
