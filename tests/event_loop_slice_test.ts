import assert from "node:assert/strict";
import { readProcFile } from "../src/controller/proc.ts";
import { startScalwsdProcess } from "./_support/scalwsd_process.ts";
import { scalwsYaml } from "./_support/yaml.ts";

/** Linux 6.12 and later take a custom slice under the normal policy. */
function customSlices(): boolean {
  if (Deno.build.os !== "linux") return false;
  const [major, minor] = Deno.osRelease().split(".").map((x) => parseInt(x));
  return major > 6 || (major === 6 && minor >= 12);
}

Deno.test({
  name: "scalwsd run asks the kernel for a 0.1 ms slice for its event loop's thread",
  ignore: !customSlices(),
  async fn() {
    await using p = await startScalwsdProcess(scalwsYaml({
      server: { admin: undefined },
      apps: [{ name: "a", domains: ["a.test"], runtime: { type: "respond", body: "a" } }],
    }));
    // The event loop runs on the process's main thread (`deno run`).
    const sched = await readProcFile(`/proc/${p.pid}/task/${p.pid}/sched`) ?? "";
    assert.match(sched, /se\.slice\s+:\s+100000\b/);
    const line = p.lines.find((l) => l.includes('"event":"event_loop_slice"'));
    assert.ok(line !== undefined, p.lines.join("\n"));
    assert.equal(JSON.parse(line).slice_us, 100);
  },
});
