import assert from "node:assert/strict";
import { type AvailabilitySink, AvailabilitySync, FULL_SCAN_LIMIT } from "./_availability.ts";
import { ctx, manyMembers } from "./_testing.ts";

class Log implements AvailabilitySink {
  events: string[] = [];
  markDown(i: number): void {
    this.events.push(`down ${i}`);
  }
  markUp(i: number): void {
    this.events.push(`up ${i}`);
  }
}

Deno.test("AvailabilitySync re-reads all members only when the version changes", () => {
  const ms = manyMembers(FULL_SCAN_LIMIT + 36);
  const log = new Log();
  const a = new AvailabilitySync(ms.length, log);
  ms[3].up = false;
  a.sync(ms, ctx({ version: 1 }));
  assert.deepEqual(log.events, ["down 3"]);
  ms[5].up = false;
  a.sync(ms, ctx({ version: 1 }));
  assert.deepEqual(log.events, ["down 3"]);
  a.sync(ms, ctx({ version: 2 }));
  assert.deepEqual(log.events, ["down 3", "down 5"]);
  assert.equal(a.downCount, 2);
});

Deno.test("AvailabilitySync without a version polls only the known-down members of a large pool", () => {
  const ms = manyMembers(FULL_SCAN_LIMIT + 36);
  const log = new Log();
  const a = new AvailabilitySync(ms.length, log);
  a.sync(ms, ctx());
  ms[1].up = false;
  a.setDown(1);
  ms[2].up = false; // not noticed: nobody asked
  for (const m of ms) m.asked = 0;
  a.sync(ms, ctx());
  assert.equal(ms.reduce((s, m) => s + m.asked, 0), 1);
  ms[1].up = true;
  a.sync(ms, ctx());
  assert.deepEqual(log.events, ["down 1", "up 1"]);
  a.invalidate();
  a.sync(ms, ctx());
  assert.deepEqual(log.events, ["down 1", "up 1", "down 2"]);
});

Deno.test("AvailabilitySync without a version re-reads every member of a small pool", () => {
  const ms = manyMembers(FULL_SCAN_LIMIT);
  const log = new Log();
  const a = new AvailabilitySync(ms.length, log);
  a.sync(ms, ctx());
  ms[9].up = false;
  a.sync(ms, ctx());
  ms[9].up = true;
  a.sync(ms, ctx());
  assert.deepEqual(log.events, ["down 9", "up 9"]);
});
