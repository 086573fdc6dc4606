import assert from "node:assert/strict";
import { ResetWatch, SAMPLE, WATCH_AFTER, type Watched } from "./reset_watch.ts";

/** A watched request whose signal reads and resets are counted. */
class Probe implements Watched {
  since = 0;
  settled = false;
  reads = 0;
  resets = 0;
  readonly c = new AbortController();
  readonly req: Request;
  constructor() {
    const c = this.c;
    const count = () => this.reads++;
    this.req = {
      get signal() {
        count();
        return c.signal;
      },
    } as unknown as Request;
  }
  reset(weight: number): void {
    this.resets += weight;
  }
}

Deno.test("ResetWatch: a handler that answers within WATCH_AFTER never reads the signal", () => {
  let now = 0;
  const w = new ResetWatch(() => now, WATCH_AFTER);
  const p = new Probe();
  w.watch(p);
  now = WATCH_AFTER - 1;
  w.settle(p);
  now = 10 * WATCH_AFTER;
  w.look();
  p.c.abort();
  assert.deepEqual([p.reads, p.resets, w.waiting], [0, 0, 0]);
});

Deno.test("ResetWatch: a reset of a slow handler's stream counts once, before or after the look", () => {
  let now = 0;
  const w = new ResetWatch(() => now, WATCH_AFTER);
  const before = new Probe();
  const after = new Probe();
  const young = new Probe();
  w.watch(before);
  w.watch(after);
  now = WATCH_AFTER - 1;
  w.watch(young);
  before.c.abort();
  now = WATCH_AFTER;
  w.look();
  // The first is seen aborted at the look, the second is listened to, the third is too young.
  assert.deepEqual([before.reads, after.reads, young.reads], [1, 1, 0]);
  assert.deepEqual([before.resets, after.resets, w.waiting], [1, 0, 1]);
  after.c.abort();
  after.c.abort();
  assert.equal(after.resets, 1);
  for (const p of [before, after, young]) w.settle(p);
  // Deno's legacy abort after the answer is not a reset.
  young.c.abort();
  assert.deepEqual([young.resets, w.waiting], [0, 0]);
});

Deno.test("ResetWatch: an abort once the handler answered is not counted", () => {
  let now = 0;
  const w = new ResetWatch(() => now, WATCH_AFTER);
  const p = new Probe();
  w.watch(p);
  now = 2 * WATCH_AFTER;
  w.look();
  w.settle(p);
  p.c.abort();
  assert.deepEqual([p.reads, p.resets, p.settled], [1, 0, true]);
});

Deno.test("ResetWatch: one request in SAMPLE is listened to from its start; its early reset counts SAMPLE", () => {
  let now = 0;
  const w = new ResetWatch(() => now, WATCH_AFTER, SAMPLE);
  const probes = Array.from({ length: 2 * SAMPLE }, () => new Probe());
  for (const p of probes) w.watch(p);
  // Deno does not report a reset before the first read: only the sampled ones have read it.
  assert.deepEqual(probes.map((p) => p.reads), probes.map((_, i) => (i + 1) % SAMPLE ? 0 : 1));
  now = 1;
  for (const p of probes) p.c.abort(); // every stream reset at once, long before WATCH_AFTER
  assert.equal(probes.reduce((n, p) => n + p.resets, 0), 2 * SAMPLE);
  // A sampled reset after WATCH_AFTER counts once, as a watched one does.
  const late = Array.from({ length: SAMPLE }, () => new Probe());
  for (const p of late) w.watch(p);
  now = 1 + WATCH_AFTER;
  late.at(-1)!.c.abort();
  assert.equal(late.at(-1)!.resets, 1);
});
