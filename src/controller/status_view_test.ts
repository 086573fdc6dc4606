import assert from "node:assert/strict";
import { parseControllerConfig } from "./config.ts";
import type { InstanceRecord } from "./records.ts";
import { statusView, stepText } from "./status_view.ts";

const CFG = parseControllerConfig(
  "state_dir: /run/scalws-controller\nconfig: scalws.yaml\ninstances: {min: 1, max: 4, initial: 2}\n",
  "/etc/scalws/controller.yaml",
  () => [0, 1],
);

function rec(id: string, generation: number, state: InstanceRecord["state"]): InstanceRecord {
  const t = "2026-01-01T00:00:00.000Z";
  return {
    id,
    pid: 10,
    start_time: 1,
    executable: "/usr/bin/scalwsd",
    cpus: [0],
    generation,
    state,
    wanted: true,
    metrics: "127.0.0.1:19100",
    admin_socket: `/s/sockets/${id}.sock`,
    log_file: `/s/logs/${id}.log`,
    started_at: t,
    state_since: t,
    updated_at: t,
    failures: [],
    gave_up: false,
  };
}

Deno.test("statusView shows the controller's configuration generation under its spec'd keys", () => {
  const v = statusView({
    pid: 42,
    startedAt: 0,
    cfg: CFG,
    state: { desired: 2, configGeneration: 3, previousConfigGeneration: 2, autoscaling: false },
    stopping: false,
    nextStep: { kind: "start", id: "web-1", reason: "1 instances, 2 wanted" },
    taskset: null,
    tcpMigrateReq: "0",
    warnings: ["net.ipv4.tcp_migrate_req is 0: set it"],
    configGenerations: [2, 3],
    generationPath: (n) => `/g/${n}/scalws.yaml`,
    slots: [
      { rec: rec("web-10", 3, "active"), child: {}, restartAt: null },
      { rec: rec("web-2", 2, "failed"), child: {}, restartAt: 60_000 },
      { rec: rec("web-0", 3, "active"), child: null, restartAt: null },
    ],
    lastEvaluation: null,
  });
  assert.deepEqual(v.controller, {
    pid: 42,
    started_at: "1970-01-01T00:00:00.000Z",
    state_dir: "/run/scalws-controller",
    config: "/etc/scalws/scalws.yaml",
    generation: 3,
    previous_generation: 2,
    desired: 2,
    min: 1,
    max: 4,
    autoscaling: false,
    stopping: false,
    next_step: "start web-1: 1 instances, 2 wanted",
    limits: {
      cpu_affinity: "unenforced (taskset not found)",
      cgroups: "not used: CPU, memory and pids limits are unenforced",
      max_instances: null,
      reserved_cpus: [],
      min_free_ram: 0,
    },
    tcp_migrate_req: "0",
    warnings: ["net.ipv4.tcp_migrate_req is 0: set it"],
  });
  // A failed instance is not counted as running on its generation.
  assert.deepEqual(v.generations, [
    { number: 2, path: "/g/2/scalws.yaml", current: false, instances: 0 },
    { number: 3, path: "/g/3/scalws.yaml", current: true, instances: 2 },
  ]);
  assert.deepEqual(v.instances.map((i) => [i.id, i.adopted, i.restart_at]), [
    ["web-0", true, null],
    ["web-2", false, "1970-01-01T00:01:00.000Z"],
    ["web-10", false, null],
  ]);
  assert.equal(v.instances[0].generation, 3);
  assert.equal(v.last_evaluation, null);
});

Deno.test("stepText says idle, wait and an action with its slot", () => {
  assert.equal(stepText({ kind: "idle" }), "idle");
  assert.equal(stepText({ kind: "wait", reason: "web-0 is warming" }), "wait: web-0 is warming");
  assert.equal(
    stepText({ kind: "retire", id: "web-3", reason: "replaced by generation 2" }),
    "retire web-3: replaced by generation 2",
  );
});
