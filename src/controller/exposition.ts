/**
 * Reads the few samples the controller needs from an instance's Prometheus text exposition:
 * plain values by name, and a histogram's buckets summed over its label sets.
 */

/** One sample line: metric name, label text between the braces (or ""), value. */
export interface Sample {
  readonly name: string;
  readonly labels: string;
  readonly value: number;
}

function parseValue(v: string): number {
  if (v === "+Inf") return Infinity;
  if (v === "-Inf") return -Infinity;
  return Number(v);
}

/** Every sample of the exposition; comments and malformed lines are skipped. */
export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const brace = line.indexOf("{");
    const space = line.lastIndexOf(" ");
    if (space < 0) continue;
    let name: string;
    let labels = "";
    if (brace >= 0 && brace < space) {
      const close = line.lastIndexOf("}");
      if (close < brace) continue;
      name = line.slice(0, brace);
      labels = line.slice(brace + 1, close);
    } else {
      name = line.slice(0, space);
    }
    const value = parseValue(line.slice(space + 1).trim());
    if (!Number.isNaN(value)) out.push({ name, labels, value });
  }
  return out;
}

/** The sum of every series of `name` (one series for an unlabelled metric); undefined if absent. */
export function sumOf(samples: readonly Sample[], name: string): number | undefined {
  let found = false;
  let sum = 0;
  for (const s of samples) {
    if (s.name === name) {
      found = true;
      sum += s.value;
    }
  }
  return found ? sum : undefined;
}

const LE = /(?:^|,)le="([^"]*)"/;

/** Cumulative bucket counts of histogram `name`, summed over its label sets, by upper bound. */
export function bucketsOf(samples: readonly Sample[], name: string): Map<number, number> {
  const out = new Map<number, number>();
  const bucket = `${name}_bucket`;
  for (const s of samples) {
    if (s.name !== bucket) continue;
    const m = LE.exec(s.labels);
    if (m === null) continue;
    const le = parseValue(m[1]);
    out.set(le, (out.get(le) ?? 0) + s.value);
  }
  return out;
}

/**
 * The `q` quantile of the observations between two readings of a cumulative histogram
 * (`before` may be empty), interpolated linearly inside the bucket as Prometheus does.
 * Undefined when nothing was observed in between.
 */
export function quantileBetween(
  q: number,
  before: ReadonlyMap<number, number>,
  after: ReadonlyMap<number, number>,
): number | undefined {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => Math.max(0, after.get(b)! - (before.get(b) ?? 0)));
  const total = counts[counts.length - 1] ?? 0;
  if (!(total > 0)) return undefined;
  const rank = q * total;
  let prevBound = 0;
  let prevCount = 0;
  for (let i = 0; i < bounds.length; i++) {
    if (counts[i] >= rank) {
      // Above the highest finite bucket there is nothing to interpolate with.
      if (bounds[i] === Infinity) return prevBound;
      const inBucket = counts[i] - prevCount;
      if (inBucket <= 0) return bounds[i];
      return prevBound + (bounds[i] - prevBound) * ((rank - prevCount) / inBucket);
    }
    prevBound = bounds[i];
    prevCount = counts[i];
  }
  return prevBound;
}
