import assert from "node:assert/strict";
import { validateMembers } from "../config/members.ts";
import type { DnsConfig } from "../config/types.ts";
import { DnsSchedule } from "./dns_schedule.ts";

const dns: DnsConfig = {
  name: "api.test",
  type: "A",
  port: 80,
  refresh: "ttl",
  min_refresh: 1_000,
  max_refresh: 300_000,
  grace: 60_000,
};
const list = (...a: string[]) => validateMembers(a.map((address) => ({ address })), "").members!;
const A = list("127.0.0.1:80");
const AB = list("127.0.0.1:80", "127.0.0.2:80");

Deno.test("DnsSchedule follows the TTL within min_refresh..max_refresh and installs only changes", () => {
  const s = new DnsSchedule(dns, A);
  assert.deepEqual(s.next({ kind: "answer", members: A, ttl: 30 }, 0), { delay: 30_000 });
  assert.deepEqual(s.next({ kind: "answer", members: AB, ttl: 0 }, 0), { apply: AB, delay: 1_000 });
  assert.deepEqual(s.next({ kind: "answer", members: AB, ttl: 86_400 }, 0), { delay: 300_000 });
  const fixed = new DnsSchedule({ ...dns, refresh: 30_000 });
  assert.equal(fixed.next({ kind: "answer", members: A, ttl: 1 }, 0).delay, 30_000);
});

Deno.test("DnsSchedule keeps the last good list on errors and empty answers, backing off", () => {
  const s = new DnsSchedule({ ...dns, refresh: 10_000 }, A);
  const delays = [];
  for (let i = 0; i < 6; i++) {
    const step = s.next(
      i % 2 ? { kind: "error", message: "timeout" } : { kind: "answer", members: [], ttl: 5 },
      0,
    );
    assert.equal(step.apply, undefined);
    assert.ok(step.error);
    delays.push(step.delay);
  }
  assert.deepEqual(delays, [1_000, 2_000, 4_000, 8_000, 10_000, 10_000]);
  assert.deepEqual(s.next({ kind: "answer", members: AB, ttl: 5 }, 0), {
    apply: AB,
    delay: 10_000,
  });
  assert.equal(
    s.next({ kind: "error", message: "x" }, 0).delay,
    1_000,
    "a success resets the backoff",
  );
});

Deno.test("DnsSchedule empties the pool only once NXDOMAIN has lasted grace", () => {
  const s = new DnsSchedule({ ...dns, min_refresh: 20_000, max_refresh: 20_000 }, A);
  let step = s.next({ kind: "nxdomain" }, 0);
  assert.equal(step.apply, undefined);
  assert.match(step.error!, /NXDOMAIN for api.test; the pool is emptied after grace/);
  step = s.next({ kind: "nxdomain" }, 50_000);
  assert.equal(step.apply, undefined);
  assert.equal(step.delay, 10_000, "the next try comes when grace ends");
  step = s.next({ kind: "nxdomain" }, 60_000);
  assert.deepEqual(step.apply, []);
  assert.equal(s.next({ kind: "nxdomain" }, 70_000).apply, undefined, "emptied once");
  // An answer between two NXDOMAINs starts the grace again.
  const t = new DnsSchedule(dns, A);
  t.next({ kind: "nxdomain" }, 0);
  t.next({ kind: "answer", members: A, ttl: 5 }, 30_000);
  assert.equal(t.next({ kind: "nxdomain" }, 61_000).apply, undefined);
});
