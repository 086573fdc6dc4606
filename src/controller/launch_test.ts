import assert from "node:assert/strict";
import { cpusFor, instanceArgv, selfCommand, shellArgs, spawnInstance } from "./launch.ts";

const L = {
  id: "web-1",
  configGeneration: 3,
  configGenerationPath: "/s/generations/3/scalws.yaml",
  cpus: [1],
  adminSocket: "/s/sockets/web-1.sock",
  metrics: "127.0.0.1:19101",
  drainTimeout: 30_000,
  logFile: "/s/logs/web-1.log",
};

Deno.test("instanceArgv passes id, generation, CPU set and per-instance sockets", () => {
  assert.deepEqual(
    instanceArgv(L, { command: ["/usr/bin/scalwsd"], taskset: "/usr/bin/taskset" }),
    [
      "/usr/bin/taskset",
      "-c",
      "1",
      "/usr/bin/scalwsd",
      "run",
      "--config",
      "/s/generations/3/scalws.yaml",
      "--generation",
      "3",
      "--instance-id",
      "web-1",
      "--cpus",
      "1",
      "--admin-socket",
      "/s/sockets/web-1.sock",
      "--metrics-address",
      "127.0.0.1:19101",
      "--drain-timeout",
      "30000ms",
    ],
  );
  assert.equal(
    instanceArgv(L, { command: ["/usr/bin/scalwsd"], taskset: null })[0],
    "/usr/bin/scalwsd",
  );
  assert.deepEqual(
    instanceArgv({ ...L, controlSocket: "/s/control.sock" }, { command: ["x"], taskset: null })
      .slice(-2),
    ["--controller-socket", "/s/control.sock"],
  );
});

Deno.test("cpusFor hands CPUs out in turn", () => {
  assert.deepEqual([0, 1, 2, 3].map((i) => cpusFor(i, { cpus: [0, 1], perInstance: 1 })), [
    [0],
    [1],
    [0],
    [1],
  ]);
  assert.deepEqual([0, 1].map((i) => cpusFor(i, { cpus: [0, 1, 2, 3], perInstance: 2 })), [[0, 1], [
    2,
    3,
  ]]);
  assert.deepEqual(cpusFor(1, { cpus: [4, 5, 6], perInstance: 2 }), [4, 6]);
});

Deno.test("selfCommand runs main.ts from source under deno, the executable itself when compiled", () => {
  assert.deepEqual(selfCommand("/usr/bin/deno", "file:///work/main/main.ts"), [
    "/usr/bin/deno",
    "run",
    "--allow-all",
    "--unstable-net",
    "/work/main/main.ts",
  ]);
  assert.deepEqual(
    selfCommand("/usr/local/bin/scalwsd", "file:///tmp/deno-compile-scalwsd/main.ts"),
    [
      "/usr/local/bin/scalwsd",
    ],
  );
});

Deno.test("spawnInstance appends the output to the log file with mode 0600 and keeps the PID", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-launch-" });
  try {
    const log = `${dir}/web-0.log`;
    const child = spawnInstance(["/bin/sh", "-c", 'echo "pid $$"; echo oops >&2'], log);
    const st = await child.status;
    assert.equal(st.code, 0);
    assert.equal(await Deno.readTextFile(log), `pid ${child.pid}\noops\n`);
    assert.equal((await Deno.stat(log)).mode! & 0o777, 0o600);
    assert.deepEqual(shellArgs(["a"], log).slice(2), ["scalwsd-instance", log, "a"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
