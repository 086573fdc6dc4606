import assert from "node:assert/strict";
import { parseControllerConfig } from "./config.ts";
import { ConfigGenerationStore } from "./generations.ts";
import { readProc } from "./proc.ts";
import { type InstanceRecord, RecordStore } from "./records.ts";
import {
  exitEvent,
  instanceLaunch,
  recordedSlot,
  rolloutBackTo,
  type Slot,
  Slots,
} from "./slots.ts";

function config(stateDir: string, extra = "") {
  return parseControllerConfig(
    `state_dir: ${stateDir}\nconfig: scalws.yaml\ninstances: {min: 1, max: 4, initial: 1}\n${extra}`,
    "/etc/scalws/controller.yaml",
    () => [0, 1, 2, 3],
  );
}

function record(id: string, o: Partial<InstanceRecord> = {}): InstanceRecord {
  const t = "2026-01-01T00:00:00.000Z";
  return {
    id,
    pid: 0,
    start_time: 0,
    executable: "/usr/bin/scalwsd",
    cpus: [0],
    generation: 1,
    state: "active",
    wanted: true,
    metrics: "127.0.0.1:19100",
    admin_socket: `/s/sockets/${id}.sock`,
    log_file: `/s/logs/${id}.log`,
    started_at: t,
    state_since: t,
    updated_at: t,
    failures: [],
    gave_up: false,
    ...o,
  };
}

Deno.test("instanceLaunch gives each slot its CPUs, metrics port, sockets and log file", () => {
  const cfg = config("/run/c", "cpus_per_instance: 2\nmetrics_base: '[::1]:19200'\n");
  assert.deepEqual(
    instanceLaunch({
      id: "web-3",
      cfg,
      configGeneration: 7,
      configGenerationPath: "/g/7/scalws.yaml",
    }),
    {
      id: "web-3",
      configGeneration: 7,
      configGenerationPath: "/g/7/scalws.yaml",
      cpus: [2, 3],
      adminSocket: "/run/c/sockets/web-3.sock",
      metrics: "[::1]:19203",
      drainTimeout: 30_000,
      logFile: "/run/c/logs/web-3.log",
      controlSocket: "/run/c/control.sock",
    },
  );
});

Deno.test("exitEvent: only a draining instance ends cleanly", () => {
  const none = { code: null, signal: null };
  assert.deepEqual(exitEvent("draining", { code: null, signal: "SIGTERM" }), {
    event: { type: "exit", clean: true },
    reason: "drained",
    expected: true,
  });
  assert.deepEqual(exitEvent("draining", { code: 3, signal: null }), {
    event: { type: "exit", clean: false },
    reason: "drained",
    expected: false,
  });
  // An adopted instance's status is unknown: gone while draining counts as clean.
  assert.equal(exitEvent("draining", none, "no such process").expected, true);
  assert.deepEqual(exitEvent("active", { code: 0, signal: null }), {
    event: { type: "exit", clean: false },
    reason: "exited unexpectedly",
    expected: false,
  });
  assert.equal(exitEvent("warming", none, "no such process").reason, "no such process");
});

Deno.test("rolloutBackTo: a failed start on the current generation goes back to the newest serving one", () => {
  const slot = (id: string, o: Partial<InstanceRecord>): Slot => recordedSlot(record(id, o), 0);
  const failed = slot("web-3", { generation: 5, state: "failed" });
  const others = [
    failed,
    slot("web-0", { generation: 3 }),
    slot("web-1", { generation: 4 }),
    slot("web-2", { generation: 9, wanted: false }),
    slot("web-4", { generation: 5 }),
    slot("web-5", { generation: 8, state: "draining" }),
  ];
  assert.equal(rolloutBackTo({ failed, from: "warming", others, current: 5 }), 4);
  assert.equal(rolloutBackTo({ failed, from: "active", others, current: 5 }), null);
  assert.equal(rolloutBackTo({ failed, from: "starting", others, current: 6 }), null);
  assert.equal(rolloutBackTo({ failed, from: "starting", others: [failed], current: 5 }), null);
});

async function waitFor(cond: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 5_000;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function fixture(command: string[], current = 1) {
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(`${dir}/logs`);
  const records = new RecordStore(dir);
  await records.init();
  const clock = { t: 1_000_000 };
  const aborted: number[] = [];
  const slots = new Slots({
    cfg: config(dir),
    command,
    taskset: null,
    now: () => clock.t,
    records,
    configGenerations: new ConfigGenerationStore(dir),
    rollout: { current: () => current, abort: (back) => aborted.push(back) },
  });
  return { dir, records, clock, aborted, slots };
}

Deno.test("Slots: a spawned process that exits while starting fails, gets a restart time, and a retire forgets it", async () => {
  const f = await fixture(["/bin/sh", "-c", "exit 3"], 2);
  try {
    await f.slots.spawn("web-1");
    const s = f.slots.get("web-1")!;
    assert.equal(s.token, 1);
    assert.equal(s.rec.generation, 2);
    assert.ok(s.rec.pid > 0);
    await waitFor(() => s.rec.state === "failed", "web-1 to fail");
    await s.writing;
    assert.deepEqual(s.rec.last_exit, { code: 3, signal: null, reason: "exited unexpectedly" });
    assert.deepEqual(s.rec.failures, [1_000_000]);
    assert.equal(s.restartAt, 1_001_000);
    // Nothing else serves: no rollout to abort.
    assert.deepEqual(f.aborted, []);
    const saved = (await f.records.readAll())[0];
    assert.equal(saved.state, "failed");
    assert.equal(saved.updated_at, new Date(1_000_000).toISOString());
    await f.slots.retire(s, "scale in");
    assert.equal(s.restartAt, null);
    assert.equal((await f.records.readAll())[0].wanted, false);
  } finally {
    await Deno.remove(f.dir, { recursive: true });
  }
});

Deno.test("Slots: retiring a running instance drains it; its SIGTERM exit stops the slot", async () => {
  const f = await fixture(["/bin/sh", "-c", "exec sleep 30"]);
  try {
    await f.slots.spawn("web-0");
    const s = f.slots.get("web-0")!;
    f.clock.t += 500;
    await f.slots.retire(s, "scale in");
    // The process may already be gone: draining, or stopped by now.
    assert.ok(s.rec.state === "draining" || s.rec.state === "stopped", s.rec.state);
    assert.equal(s.drainStartedAt, 1_000_500);
    await waitFor(() => s.rec.state === "stopped", "web-0 to stop");
    await s.writing;
    assert.equal(s.rec.last_exit?.signal, "SIGTERM");
    assert.equal(s.rec.last_exit?.reason, "drained");
    assert.equal(s.restartAt, null);
    assert.equal((await f.records.readAll())[0].state, "stopped");
  } finally {
    await Deno.remove(f.dir, { recursive: true });
  }
});

Deno.test("Slots.adopt keeps a verified live process, fails a vanished one, restarts a failed one", async () => {
  const f = await fixture(["/bin/sh", "-c", "exit 1"], 2);
  try {
    const me = (await readProc(Deno.pid))!;
    await f.records.write(
      record("web-0", { pid: Deno.pid, start_time: me.startTime, executable: me.exe! }),
    );
    await f.records.write(record("web-1", { pid: 2 ** 22 + 1, start_time: 5 }));
    await f.records.write(record("web-2", { state: "failed" }));
    await f.records.write(record("web-3", { state: "failed", gave_up: true }));
    assert.deepEqual(await f.slots.adopt(), ["web-0"]);
    const [web0, web1, web2, web3] = f.slots.sorted();
    assert.equal(web0.child, null);
    assert.equal(web0.rec.state, "active");
    assert.equal(web1.rec.state, "failed");
    assert.equal(web1.rec.last_exit?.reason, "gone while the controller was away: no such process");
    assert.equal(web1.restartAt, 1_001_000);
    assert.equal(web2.restartAt, 1_000_000);
    assert.equal(web3.restartAt, null);
    // A start on generation 2 that fails while web-0 serves generation 1 aborts the rollout.
    await f.slots.spawn("web-4");
    const web4 = f.slots.get("web-4")!;
    await waitFor(() => web4.rec.state === "failed", "web-4 to fail");
    await web4.writing;
    assert.deepEqual(f.aborted, [1]);
    assert.deepEqual(f.slots.views().map((v) => v.id), [
      "web-0",
      "web-1",
      "web-2",
      "web-3",
      "web-4",
    ]);
  } finally {
    await Deno.remove(f.dir, { recursive: true });
  }
});
