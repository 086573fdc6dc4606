/**
 * How the in-process benches measure: the process's CPU time (user + system, not the wall
 * clock) per request over a batch, the batches of every case interleaved after one warm-up batch
 * each, and medians. `[batches=30] [requests per batch=2000]` come from the command line.
 */
import process from "node:process";

/**
 * One case: given `n`, sets up what is not to be counted (requests built, a generation chosen)
 * and returns the part that is: serving the `n` requests and checking their answers.
 */
export type BatchCase = (n: number) => () => Promise<void>;

/** The command line's `[batches=30] [requests per batch=2000]`. */
export function batchArgs(): { readonly batches: number; readonly perBatch: number } {
  return { batches: Number(Deno.args[0] ?? 30), perBatch: Number(Deno.args[1] ?? 2000) };
}

/** CPU microseconds per request of one batch of `n`. */
export async function cpuPerRequest(c: BatchCase, n: number): Promise<number> {
  const run = c(n);
  const t0 = process.cpuUsage();
  await run();
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / n;
}

/**
 * A warm-up batch of every case, then `batches` rounds of one batch of each case in turn: the
 * CPU microseconds per request of every batch, by case.
 */
export async function interleaved(
  cases: Readonly<Record<string, BatchCase>>,
  o: { readonly batches: number; readonly perBatch: number },
): Promise<Record<string, number[]>> {
  for (const run of Object.values(cases)) await cpuPerRequest(run, o.perBatch);
  const times: Record<string, number[]> = {};
  for (let b = 0; b < o.batches; b++) {
    for (const [name, run] of Object.entries(cases)) {
      (times[name] ??= []).push(await cpuPerRequest(run, o.perBatch));
    }
  }
  return times;
}

/** The median (the upper one of an even count). */
export function median(t: readonly number[]): number {
  return [...t].sort((a, b) => a - b)[t.length >> 1];
}
