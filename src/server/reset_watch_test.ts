import assert from "node:assert/strict";
import { ResetWatch, WATCH_AFTER, type Watched } from "./reset_watch.ts";

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
  reset(): void {
    this.resets++;
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
