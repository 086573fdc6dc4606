import assert from "node:assert/strict";
import { InstanceWatch, type WatchedSlots } from "./instance_watch.ts";
import { type InstanceState, type LifecycleEvent, transition } from "./lifecycle.ts";
import type { Readiness } from "./probe.ts";
import type { InstanceRecord } from "./records.ts";
import type { Slot } from "./slots.ts";

function slot(id: string, state: InstanceState, pid: number): Slot {
  const rec = {
    id,
    pid,
    start_time: 1,
    executable: "/bin/scalwsd",
    cpus: [0],
    generation: 1,
    state,
    wanted: true,
    metrics: `127.0.0.1:${pid}`,
    admin_socket: `/run/${id}.sock`,
    log_file: "/dev/null",
    started_at: "",
    state_since: "",
    updated_at: "",
    failures: [],
    gave_up: false,
  } as InstanceRecord;
  return {
    rec,
    child: null,
    token: 1,
    spawnedAt: 0,
    drainStartedAt: state === "draining" ? 0 : null,
    activationSentAt: null,
    restartAt: null,
    lastScrape: null,
    probeFailures: 0,
    writing: Promise.resolve(),
  };
}

/** Fake slots: `apply` follows the lifecycle table and records every change. */
function fakeSlots(list: Slot[]) {
  const applied: string[] = [];
  const slots: WatchedSlots = {
    [Symbol.iterator]: () => list[Symbol.iterator](),
    apply(s: Slot, ev: LifecycleEvent, reason?: string) {
      const to = transition(s.rec.state, ev);
      if (to !== null) {
        applied.push(`${s.rec.id} ${ev.type}${reason ? ` (${reason})` : ""} -> ${to}`);
        s.rec = { ...s.rec, state: to };
      }
      return Promise.resolve();
    },
    exited(s: Slot, _token: number, _st, why?: string) {
      applied.push(`${s.rec.id} exited: ${why}`);
      return Promise.resolve();
    },
  };
  return { slots, applied };
}

function watch(o: {
  list: Slot[];
  clock: { t: number };
  probe?: (address: string) => Readiness | null;
  synced?: boolean;
}) {
  const { slots, applied } = fakeSlots(o.list);
  const signals: string[] = [];
  const w = new InstanceWatch({
    cfg: { start_timeout: 1_000, drain_timeout: 500, kill_grace: 100, liveness_timeout: 3_000 },
    slots,
    members: { sync: () => Promise.resolve(o.synced ?? true), prune: () => {} },
    now: () => o.clock.t,
    stopping: () => false,
    probe: (address) => Promise.resolve(o.probe ? o.probe(address) : null),
    readProc: () => Promise.resolve(null),
    signal: (pid, sig) => (signals.push(`${pid} ${sig}`), true),
  });
  return { w, applied, signals };
}

Deno.test("enforceTimeouts kills an instance past start_timeout, or past drain_timeout + kill_grace", async () => {
  const clock = { t: 1_000 };
  const list = [slot("web-0", "starting", 10), slot("web-1", "draining", 11)];
  list[1].drainStartedAt = 400;
  const { w, applied, signals } = watch({ list, clock });
  await w.enforceTimeouts();
  assert.deepEqual(signals, [], "exactly at the limits: nothing yet");
  clock.t = 1_001;
  await w.enforceTimeouts();
  assert.deepEqual(signals, ["10 SIGKILL", "11 SIGKILL"]);
  assert.equal(applied.length, 2);
  assert.match(applied[0], /^web-0 start_timeout \(start timeout\) -> /);
  assert.match(applied[1], /^web-1 drain_timeout \(drain timeout, killed\) -> /);
});

Deno.test("probeAll follows reported states and activates a ready instance once it holds the lists", async () => {
  const clock = { t: 0 };
  const list = [slot("web-0", "starting", 10), slot("web-1", "starting", 11)];
  const { w, applied, signals } = watch({
    list,
    clock,
    probe: (a) => a.endsWith(":10") ? { generation: 1, state: "ready" } : null,
  });
  await w.probeAll();
  assert.equal(list[0].rec.state, "ready");
  assert.deepEqual(signals, ["10 SIGUSR2"]);
  assert.equal(list[1].probeFailures, 1);
  assert.deepEqual(applied, ["web-0 warming -> warming", "web-0 ready -> ready"]);
  // Sent again only after 2 s without an answer.
  clock.t = 1_999;
  await w.probeAll();
  assert.deepEqual(signals, ["10 SIGUSR2"]);
  clock.t = 2_000;
  await w.probeAll();
  assert.deepEqual(signals, ["10 SIGUSR2", "10 SIGUSR2"]);
});

Deno.test("probeAll does not activate an instance that does not hold the member lists", async () => {
  const list = [slot("web-0", "starting", 10)];
  const { w, signals } = watch({
    list,
    clock: { t: 0 },
    probe: () => ({ generation: 1, state: "ready" }),
    synced: false,
  });
  await w.probeAll();
  assert.equal(list[0].rec.state, "ready");
  assert.deepEqual(signals, []);
});

Deno.test("checkAdopted reports an adopted process that is gone", async () => {
  const list = [slot("web-0", "active", 10)];
  const { w, applied } = watch({ list, clock: { t: 0 } });
  await w.checkAdopted();
  assert.equal(applied.length, 1);
  assert.match(applied[0], /^web-0 exited: /);
});

Deno.test("probeAll fails and kills an active instance unanswered for liveness_timeout, not before", async () => {
  const clock = { t: 0 };
  const list = [slot("web-0", "active", 10), slot("web-1", "ready", 11)];
  let answer = false;
  const { w, applied, signals } = watch({
    list,
    clock,
    probe: (a) => answer && a.endsWith(":10") ? { generation: 1, state: "active" } : null,
  });
  await w.probeAll();
  clock.t = 2_999;
  await w.probeAll();
  assert.deepEqual(signals, [], "within liveness_timeout");
  // One answer starts the count again.
  answer = true;
  await w.probeAll();
  answer = false;
  clock.t = 5_000;
  await w.probeAll();
  clock.t = 7_999;
  await w.probeAll();
  assert.deepEqual(signals, []);
  clock.t = 8_000;
  await w.probeAll();
  assert.deepEqual(signals, ["10 SIGKILL"], "only the active one: a start has start_timeout");
  assert.deepEqual(applied, ["web-0 liveness_failed (liveness failed, killed) -> failed"]);
});
