import assert from "node:assert/strict";
import { sleep, waitUntil } from "./wait.ts";

Deno.test("waitUntil returns the first value that is not false, undefined or null", async () => {
  let n = 0;
  const v = await waitUntil(() => (++n >= 3 ? `try ${n}` : undefined), { what: "a third try" });
  assert.equal(v, "try 3");
  assert.equal(await waitUntil(() => 0, { what: "zero" }), 0);
});

Deno.test("waitUntil names what it waited for, and the last error, when time runs out", async () => {
  await assert.rejects(
    () => waitUntil(() => false, { what: "the member to be ejected", timeoutMs: 30 }),
    { message: "timed out after 30 ms waiting for the member to be ejected" },
  );
  await assert.rejects(
    () =>
      waitUntil(() => {
        throw new Error("connection refused");
      }, { what: "the socket", timeoutMs: 20 }),
    { message: "timed out after 20 ms waiting for the socket: connection refused" },
  );
});

Deno.test("waitUntil tries again after a throw, and sleep waits at least its time", async () => {
  let n = 0;
  const t0 = performance.now();
  await sleep(20);
  assert.ok(performance.now() - t0 >= 19);
  const v = await waitUntil(async () => {
    if (++n < 2) throw new Error("not yet");
    return await Promise.resolve(true);
  }, { what: "a second try" });
  assert.equal(v, true);
});

// Issue 12: one `waitUntil` and one `sleep` for every end-to-end test. A file of tests/ that
// writes its own (`until`, `delay`, `waitFor`, another `sleep`) fails here, naming the line.
Deno.test("no end-to-end test defines its own wait or sleep helper", () => {
  const name = "(until|sleep|delay|waitFor|waitUntil|pause)";
  const own = new RegExp(
    `^\\s*(?:export\\s+)?(?:async\\s+function\\s+${name}\\b|function\\s+${name}\\b|` +
      `const\\s+${name}\\s*=\\s*(?:async\\s*)?(?:\\(|function))`,
  );
  const found: string[] = [];
  const dir = new URL("../", import.meta.url);
  for (const e of Deno.readDirSync(dir)) {
    if (!e.isFile || !e.name.endsWith(".ts")) continue;
    const lines = Deno.readTextFileSync(new URL(e.name, dir)).split("\n");
    lines.forEach((l, i) => {
      if (own.test(l)) found.push(`tests/${e.name}:${i + 1}: ${l.trim()}`);
    });
  }
  assert.deepEqual(found, [], "use waitUntil and sleep from tests/_support/mod.ts");
});
