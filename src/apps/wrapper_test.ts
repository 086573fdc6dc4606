import assert from "node:assert/strict";
import { wrapped } from "./wrapper.ts";

Deno.test("wrapper: SIGUSR1 (log rotation sent to a whole unit) neither ends the shell nor reaches the application", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-wrapper-" });
  try {
    // The application records a SIGUSR1 it gets; the wrapper must drop it.
    const child = new Deno.Command("sh", {
      args: wrapped([
        "sh",
        "-c",
        `trap 'echo usr1 >> ${dir}/got' USR1; sleep 1 & wait; sleep 1 & wait`,
      ]),
      env: { SCALWS_PIDFILE: `${dir}/pid` },
      stdin: "piped",
      stdout: "null",
      stderr: "null",
    }).spawn();
    for (let i = 0; i < 100; i++) {
      try {
        if (Deno.readTextFileSync(`${dir}/pid`).trim() !== "") break;
      } catch { /* not yet */ }
      await new Promise((r) => setTimeout(r, 10));
    }
    child.kill("SIGUSR1");
    await new Promise((r) => setTimeout(r, 100));
    try {
      child.kill("SIGUSR1");
    } catch { /* ended by the first one: asserted below */ }
    const status = await child.status;
    await child.stdin.close().catch(() => {});
    assert.equal(status.signal, null, "the wrapper was ended by SIGUSR1");
    assert.equal(status.code, 0);
    assert.throws(() => Deno.readTextFileSync(`${dir}/got`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("wrapper: SIGTERM reaches the application; the shell adds nothing to its output", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-wrapper-" });
  try {
    const child = new Deno.Command("sh", {
      args: wrapped(["sleep", "30"]),
      env: { SCALWS_PIDFILE: `${dir}/pid` },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    for (let i = 0; i < 100; i++) {
      try {
        if (Deno.readTextFileSync(`${dir}/pid`).trim() !== "") break;
      } catch { /* not yet */ }
      await new Promise((r) => setTimeout(r, 10));
    }
    child.kill("SIGTERM");
    const out = await child.output();
    await child.stdin.close().catch(() => {});
    assert.equal(out.code, 143, "the application's status (SIGTERM)");
    assert.equal(new TextDecoder().decode(out.stderr), "");
    assert.equal(new TextDecoder().decode(out.stdout), "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
