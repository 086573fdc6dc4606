import assert from "node:assert/strict";
import { wrapped } from "./wrapper.ts";

/**
 * The wrapper around `script` (run by `sh -c`), its PID file a FIFO: writing the application's
 * PID holds the wrapper, right after the application started, until `release()` opens the
 * FIFO. `started()` waits (10 s at most) for the PID that the script writes to `started`.
 */
async function holdWrapper(dir: string, script: string) {
  const pidFile = `${dir}/pid`;
  assert.ok((await new Deno.Command("mkfifo", { args: [pidFile] }).output()).success);
  const child = new Deno.Command("sh", {
    args: wrapped(["sh", "-c", script]),
    env: { SCALWS_PIDFILE: pidFile },
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let fifo: Deno.FsFile | null = null;
  return {
    child,
    async started(): Promise<number> {
      const end = Date.now() + 10_000;
      while (Date.now() < end) {
        try {
          const pid = Number(Deno.readTextFileSync(`${dir}/started`).trim());
          if (pid > 0) return pid;
        } catch { /* not yet */ }
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error("the application did not start within 10 s");
    },
    /** Read and write at once: never blocks, and lets the wrapper's write through. */
    async release(): Promise<void> {
      fifo = await Deno.open(pidFile, { read: true, write: true });
    },
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGKILL");
      } catch { /* ended */ }
      await child.status;
      await child.stdin.close().catch(() => {});
      fifo?.close();
    },
  };
}

function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

Deno.test("wrapper: SIGUSR1 (log rotation sent to a whole unit) neither ends the shell nor reaches the application", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-wrapper-" });
  try {
    // The application records a SIGUSR1 it gets; the wrapper must drop it, from the moment the
    // application has started (here while the wrapper writes its PID) to its end.
    await using w = await holdWrapper(
      dir,
      `trap 'echo usr1 >> ${dir}/got' USR1; echo $$ > ${dir}/started; sleep 1 & wait; sleep 1 & wait`,
    );
    await w.started();
    w.child.kill("SIGUSR1");
    await w.release();
    await new Promise((r) => setTimeout(r, 100));
    try {
      w.child.kill("SIGUSR1");
    } catch { /* ended by the first one: asserted below */ }
    const status = await w.child.status;
    assert.equal(status.signal, null, "the wrapper was ended by SIGUSR1");
    assert.equal(status.code, 0);
    assert.throws(() => Deno.readTextFileSync(`${dir}/got`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("wrapper: SIGTERM as soon as the application has started is passed on to it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-wrapper-" });
  let app = 0;
  try {
    await using w = await holdWrapper(dir, `echo $$ > ${dir}/started; exec sleep 10`);
    app = await w.started();
    w.child.kill("SIGTERM");
    await w.release();
    const status = await w.child.status;
    // The shell exits with the application's status: ended by SIGTERM, 128 + 15.
    assert.equal(status.signal, null, "the wrapper was ended by SIGTERM");
    assert.equal(status.code, 143);
    assert.equal(alive(app), false, "the application outlived its wrapper");
  } finally {
    if (app > 0 && alive(app)) Deno.kill(app, "SIGKILL");
    await Deno.remove(dir, { recursive: true });
  }
});
