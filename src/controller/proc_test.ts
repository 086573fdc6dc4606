import assert from "node:assert/strict";
import { mismatch, parseStat, readProc, readProcFile, readProcViaShell } from "./proc.ts";

const STAT =
  "4242 (deno (x) y) S 1 4242 4242 0 -1 4194304 2990 0 0 0 1 0 0 0 20 0 6 0 135294 18591891456 8609";

Deno.test("parseStat reads state and start time past a command name with spaces and parentheses", () => {
  assert.deepEqual(parseStat(STAT), { state: "S", startTime: 135294 });
  assert.equal(parseStat("garbage"), null);
});

Deno.test("readProc describes this process and nothing for a missing PID", async () => {
  for (const read of [readProc, readProcViaShell]) {
    const me = (await read(Deno.pid))!;
    assert.ok(me.startTime > 0);
    assert.equal(me.exe, Deno.realPathSync(Deno.execPath()));
    assert.ok(me.argv.includes("test"));
    assert.equal(await read(0x3fffffff), null);
  }
  const [direct, shell] = [(await readProc(Deno.pid))!, (await readProcViaShell(Deno.pid))!];
  assert.deepEqual([shell.startTime, shell.exe, shell.argv], [
    direct.startTime,
    direct.exe,
    direct.argv,
  ]);
});

Deno.test("readProc treats a zombie as gone", async () => {
  const root = Deno.makeTempDirSync({ prefix: "scalwsd-proc-" });
  try {
    Deno.mkdirSync(`${root}/77`);
    Deno.writeTextFileSync(`${root}/77/stat`, STAT.replace(") S ", ") Z "));
    assert.equal(await readProc(77, root), null);
    assert.equal(await readProcViaShell(77, root), null);
    Deno.writeTextFileSync(`${root}/77/stat`, STAT);
    Deno.writeTextFileSync(`${root}/77/cmdline`, "scalwsd\0run\0--instance-id\0web-3\0");
    assert.deepEqual(await readProcViaShell(77, root), await readProc(77, root));
    assert.deepEqual(await readProc(77, root), {
      state: "S",
      startTime: 135294,
      exe: null,
      argv: ["scalwsd", "run", "--instance-id", "web-3"],
    });
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("mismatch checks start time, then executable or instance id", () => {
  const rec = { pid: 1, start_time: 100, executable: "/usr/bin/scalwsd", id: "web-3" };
  const info = { state: "S", startTime: 100, exe: "/usr/bin/scalwsd", argv: [] };
  assert.equal(mismatch(rec, info), null);
  assert.equal(mismatch(rec, null), "no such process");
  assert.equal(
    mismatch(rec, { ...info, startTime: 101 }),
    "start time 101 is not the recorded 100 (PID reused)",
  );
  assert.equal(
    mismatch(rec, { ...info, exe: "/usr/bin/python3" }),
    "executable /usr/bin/python3 is not the recorded /usr/bin/scalwsd",
  );
  assert.equal(
    mismatch(rec, {
      ...info,
      exe: "/usr/bin/taskset",
      argv: ["taskset", "-c", "0", "scalwsd", "run", "--instance-id", "web-3"],
    }),
    null,
  );
  assert.notEqual(
    mismatch(rec, { ...info, exe: "/usr/bin/taskset", argv: ["x", "--instance-id", "web-4"] }),
    null,
  );
});

Deno.test("readProcFile reads a sysctl, null for a missing file", async () => {
  assert.match((await readProcFile("/proc/sys/kernel/pid_max"))!, /^\d+$/);
  assert.equal(await readProcFile("/proc/sys/no/such/sysctl"), null);
});
