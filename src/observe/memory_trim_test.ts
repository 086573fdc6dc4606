import assert from "node:assert/strict";
import { setLogSink } from "./log.ts";
import { MemoryTrimmer, TrimPolicy, type TrimSettings } from "./memory_trim.ts";

const MIB = 1024 * 1024;
const SETTINGS: TrimSettings = {
  quietMs: 3_000,
  quietRate: 5,
  growthBytes: 24 * MIB,
  minIntervalMs: 10_000,
};

/** Feeds one sample per second from `t0`: request counts and RSS in MiB; returns the verdicts. */
function feed(p: TrimPolicy, t0: number, requests: number[], rssMib: number[]): boolean[] {
  return requests.map((r, i) => p.sample(t0 + i * 1000, r, rssMib[i] * MIB));
}

Deno.test("trim policy: releases after 3 s of quiet once RSS grew by 24 MiB", () => {
  const p = new TrimPolicy(SETTINGS, 70 * MIB);
  // Busy for 3 s (1000 req/s) up to 200 MiB, then no requests.
  const got = feed(
    p,
    0,
    [0, 1000, 2000, 3000, 3000, 3000, 3000, 3000],
    [70, 150, 200, 200, 200, 200, 200, 200],
  );
  // Quiet from t=3 s (the last sample with traffic); due at t=6 s.
  assert.deepEqual(got, [false, false, false, false, false, false, true, true]);
});

Deno.test("trim policy: a trickle of requests counts as quiet, more does not", () => {
  const trickle = new TrimPolicy(SETTINGS, 70 * MIB);
  assert.deepEqual(
    feed(trickle, 0, [0, 5, 10, 15, 20], [100, 100, 100, 100, 100]),
    [false, false, false, true, true],
  );
  const busy = new TrimPolicy(SETTINGS, 70 * MIB);
  assert.deepEqual(
    feed(busy, 0, [0, 6, 12, 18, 24, 30], [100, 100, 100, 100, 100, 100]),
    [false, false, false, false, false, false],
  );
});

Deno.test("trim policy: no release without growth; the mark follows RSS down and each release", () => {
  const p = new TrimPolicy(SETTINGS, 70 * MIB);
  assert.deepEqual(feed(p, 0, [0, 0, 0, 0, 0], [93, 93, 93, 93, 93]), [
    false,
    false,
    false,
    false,
    false,
  ]);
  // RSS fell to 60 by itself: 84 is now 24 MiB of growth.
  assert.equal(p.sample(5000, 0, 60 * MIB), false);
  assert.equal(p.sample(6000, 0, 84 * MIB), true);
  p.released(6000, 80 * MIB);
  // After the release the mark is 80: 100 is not enough growth, 104 is (once 10 s have passed).
  assert.equal(p.sample(17_000, 0, 100 * MIB), false);
  assert.equal(p.sample(18_000, 0, 104 * MIB), true);
});

Deno.test("trim policy: at most one release per minIntervalMs", () => {
  const p = new TrimPolicy(SETTINGS, 70 * MIB);
  feed(p, 0, [0, 0, 0], [70, 70, 70]);
  assert.equal(p.sample(3000, 0, 200 * MIB), true);
  // The release gave nothing back (the memory is in use): no second try before 10 s.
  p.released(3000, 150 * MIB);
  assert.equal(p.sample(4000, 0, 180 * MIB), false);
  assert.equal(p.sample(12_999, 0, 180 * MIB), false);
  assert.equal(p.sample(13_000, 0, 180 * MIB), true);
});

Deno.test("memory trimmer: releases through the releaser, logs before and after, then rests", () => {
  let now = 0;
  let rss = 70 * MIB;
  let requests = 0;
  let releases = 0;
  const lines: string[] = [];
  setLogSink((l) => lines.push(l));
  try {
    const t = new MemoryTrimmer(
      () => requests,
      {
        describe: () => ["test"],
        release() {
          releases++;
          now += 40;
          rss = 75 * MIB;
        },
      },
      SETTINGS,
      () => now,
      () => rss,
    );
    const step = (req: number, mib: number) => {
      requests += req;
      rss = mib * MIB;
      const r = t.tick();
      now += 1000;
      return r;
    };
    assert.deepEqual(
      [step(0, 70), step(4000, 190), step(4000, 220), step(0, 220), step(0, 220)],
      [false, false, false, false, false],
    );
    assert.equal(step(0, 220), true);
    assert.equal(releases, 1);
    const ev = JSON.parse(lines.at(-1)!);
    assert.equal(ev.event, "memory_released");
    assert.equal(ev.rss_before_mib, 220);
    assert.equal(ev.rss_after_mib, 75);
    assert.equal(ev.pause_ms, 40);
    assert.equal(step(0, 75), false);
    assert.equal(releases, 1);
  } finally {
    setLogSink(null);
  }
});
