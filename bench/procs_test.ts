import assert from "node:assert/strict";
import { cpuTicks, findExecutable, freePorts, Procs, withProcs } from "./procs.ts";

Deno.test("freePorts gives distinct ports that can be bound on 127.0.0.1", () => {
  const ports = freePorts(3);
  assert.equal(new Set(ports).size, 3);
  for (const port of ports) Deno.listen({ hostname: "127.0.0.1", port }).close();
});

Deno.test("Procs.stopAll ends a running child and output() returns a command's text", async () => {
  const procs = new Procs();
  const dir = await Deno.makeTempDir({ prefix: "bench-procs-" });
  try {
    const child = await procs.spawn("sleeper", "sleep", ["30"], `${dir}/sleep.log`);
    assert.deepEqual(await procs.exited(), []);
    assert.ok((await cpuTicks(child.pid)) !== undefined);
    const started = Date.now();
    await procs.stopAll(2000);
    assert.equal((await child.status).signal, "SIGTERM");
    assert.ok(Date.now() - started < 2000);
    const out = await procs.output("echo", "echo", ["hello"]);
    assert.deepEqual(out, { code: 0, stdout: "hello\n", stderr: "" });
  } finally {
    await procs.stopAll(100);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Procs.exited names a child that died, with the end of its log", async () => {
  const procs = new Procs();
  const dir = await Deno.makeTempDir({ prefix: "bench-procs-" });
  try {
    const child = await procs.spawn(
      "failer",
      "sh",
      ["-c", "echo broken config >&2; exit 3"],
      `${dir}/f.log`,
    );
    await child.status;
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(await procs.exited(), ["failer (exit 3):\n    broken config"]);
  } finally {
    await procs.stopAll(100);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("findExecutable finds sh and not a made-up name", () => {
  assert.ok(findExecutable("sh")?.endsWith("/sh"));
  assert.equal(findExecutable("no-such-tool-here"), undefined);
});

Deno.test("withProcs stops its children and removes its directory when its work ends or throws", async () => {
  let child: Deno.ChildProcess | undefined;
  let dir = "";
  const value = await withProcs("procs-test", async (procs, d) => {
    dir = d;
    child = await procs.spawn("sleeper", "sleep", ["30"], `${d}/sleep.log`);
    return 7;
  });
  assert.equal(value, 7);
  assert.equal((await child!.status).signal, "SIGTERM");
  await assert.rejects(Deno.stat(dir), Deno.errors.NotFound);

  await assert.rejects(
    withProcs("procs-test", async (procs, d) => {
      dir = d;
      child = await procs.spawn("sleeper", "sleep", ["30"], `${d}/sleep.log`);
      throw new Error("bench failed");
    }),
    /bench failed/,
  );
  assert.equal((await child!.status).signal, "SIGTERM");
  await assert.rejects(Deno.stat(dir), Deno.errors.NotFound);
});
