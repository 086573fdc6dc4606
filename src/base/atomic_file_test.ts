import assert from "node:assert/strict";
import { writeFileAtomic } from "./atomic_file.ts";

Deno.test("writeFileAtomic replaces the file whole with mode 0600 and leaves no temporary", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-atomic-" });
  try {
    const path = `${dir}/web-0.json`;
    await Deno.writeTextFile(path, "old content that is longer than the new one", { mode: 0o644 });
    await writeFileAtomic(path, '{"id":"web-0"}');
    assert.equal(await Deno.readTextFile(path), '{"id":"web-0"}');
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    const names = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    assert.deepEqual(names, ["web-0.json"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeFileAtomic leaves the old file in place when the target cannot be replaced", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-atomic-" });
  try {
    // A directory at the target path makes the rename fail after the data was written.
    await Deno.mkdir(`${dir}/target`);
    await Deno.writeTextFile(`${dir}/target/keep`, "x");
    await assert.rejects(() => writeFileAtomic(`${dir}/target`, "new"));
    const names = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    assert.deepEqual(names, ["target"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
