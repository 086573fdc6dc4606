/**
 * Paired runs against the standing stack of `_php_stack.ts`: wrk on each target in turn (the
 * order rotated per round), CPU per request of each target process (all its threads'
 * schedstat run time, ns), req/s, p99, load average.
 *
 *   deno run -A bench/_paired.ts --path / --host wp.test -c 4 -d 10 --rounds 3 \
 *     name=PORT:PID ...
 */
import { parseArgs } from "node:util";
import { parseWrk } from "./wrk_output.ts";

const { values, positionals } = parseArgs({
  args: Deno.args,
  allowPositionals: true,
  options: {
    path: { type: "string", default: "/" },
    host: { type: "string", default: "wp.test" },
    c: { type: "string", default: "4" },
    d: { type: "string", default: "10" },
    rounds: { type: "string", default: "3" },
    warmup: { type: "string", default: "2" },
    together: { type: "boolean", default: false },
  },
});
const targets = positionals.map((p) => {
  const [name, rest] = p.split("=");
  const [port, pid] = rest.split(":").map(Number);
  return { name, port, pid };
});

async function cpuNs(pid: number): Promise<number> {
  let sum = 0;
  for await (const e of Deno.readDir(`/proc/${pid}/task`)) {
    try {
      const t = await Deno.readTextFile(`/proc/${pid}/task/${e.name}/schedstat`);
      sum += Number(t.split(" ")[0]);
    } catch {
      // thread gone
    }
  }
  return sum;
}

async function wrk(port: number, secs: number) {
  const out = await new Deno.Command("wrk", {
    args: [
      `-t${Math.min(2, Number(values.c))}`,
      `-c${values.c}`,
      `-d${secs}s`,
      "--timeout",
      "10s",
      "--latency",
      "-H",
      `Host: ${values.host}`,
      `http://127.0.0.1:${port}${values.path}`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return parseWrk(new TextDecoder().decode(out.stdout));
}

const load = async () =>
  (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
const rows: Record<string, string[]> = {};
if (values.together) {
  for (let r = 0; r < Number(values.rounds); r++) {
    await Promise.all(targets.map((t) => wrk(t.port, Number(values.warmup))));
    await new Promise((res) => setTimeout(res, 500));
    const c0 = await Promise.all(targets.map((t) => cpuNs(t.pid)));
    const ws = await Promise.all(targets.map((t) => wrk(t.port, Number(values.d))));
    const c1 = await Promise.all(targets.map((t) => cpuNs(t.pid)));
    const l = await load();
    targets.forEach((t, i) => {
      const w = ws[i];
      const us = (c1[i] - c0[i]) / 1000 / w.requests;
      console.log(
        `round ${r} ${t.name}: ${w.requestsPerSec.toFixed(1)} req/s p99 ${w.p99Ms.toFixed(1)} ms ` +
          `${us.toFixed(0)} us/req non2xx ${w.non2xx} load ${l}`,
      );
      (rows[t.name] ??= []).push(us.toFixed(0));
    });
  }
}
for (let r = 0; r < (values.together ? 0 : Number(values.rounds)); r++) {
  const order = targets.map((_, i) => targets[(i + r) % targets.length]);
  for (const t of order) {
    await wrk(t.port, Number(values.warmup));
    await new Promise((res) => setTimeout(res, 500));
    const c0 = await cpuNs(t.pid);
    const w = await wrk(t.port, Number(values.d));
    const c1 = await cpuNs(t.pid);
    const us = (c1 - c0) / 1000 / w.requests;
    const line = `${t.name}: ${w.requestsPerSec.toFixed(1)} req/s p99 ${w.p99Ms.toFixed(1)} ms ` +
      `${us.toFixed(0)} us/req non2xx ${w.non2xx} load ${await load()}`;
    console.log(`round ${r} ${line}`);
    (rows[t.name] ??= []).push(us.toFixed(0));
  }
}
for (const [k, v] of Object.entries(rows)) console.log(`${k}: ${v.join(" ")}`);
