/**
 * Requests per second of 1 and 2 instances under `scalwsd controller` (SO_REUSEPORT, one CPU
 * each) and the resident memory of each instance, measured with wrk on loopback.
 *
 *   deno run -A bench/controller_bench.ts [--seconds 8] [--runs 3] [--connections 64]
 *
 * wrk runs unpinned beside the instances: on a 2-CPU host it competes with them for CPU.
 */
import { parseArgs } from "node:util";
import { parseWrk } from "./wrk_output.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

const { values } = parseArgs({
  args: Deno.args,
  options: {
    seconds: { type: "string", default: "8" },
    runs: { type: "string", default: "3" },
    connections: { type: "string", default: "64" },
  },
});
const SECONDS = Number(values.seconds);
const RUNS = Number(values.runs);
const CONNECTIONS = Number(values.connections);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function control(socket: string, path: string, init: RequestInit = {}): Promise<unknown> {
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
  try {
    return await (await fetch(`http://localhost${path}`, { ...init, client })).json();
  } finally {
    client.close();
  }
}

interface Inst {
  id: string;
  pid: number;
  state: string;
  wanted: boolean;
}

async function active(socket: string, n: number): Promise<Inst[]> {
  let s: unknown;
  for (let i = 0; i < 600; i++) {
    const st = await control(socket, "/v1/status") as {
      instances: Inst[];
      controller: { next_step: string };
    };
    s = st;
    const a = st.instances.filter((x) => x.wanted && x.state === "active");
    if (a.length === n && st.controller.next_step === "idle") return a;
    await sleep(50);
  }
  throw new Error(`no ${n} active instances: ${JSON.stringify(s)}`);
}

/** A port below the ephemeral range, free now, with `count` free ports above it. */
function quietPort(count: number): number {
  const low = Number(
    Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range").split(/\s+/)[0],
  );
  for (let i = 0; i < 100; i++) {
    const base = 10_000 + Math.floor(Math.random() * (low - 10_000 - count));
    let ok = true;
    for (let p = base; p < base + count && ok; p++) {
      try {
        Deno.listen({ hostname: "127.0.0.1", port: p }).close();
      } catch {
        ok = false;
      }
    }
    if (ok) return base;
  }
  throw new Error("no free port range below the ephemeral ports");
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function wrk(port: number): Promise<number> {
  const out = await new Deno.Command("wrk", {
    args: [
      "-t1",
      `-c${CONNECTIONS}`,
      `-d${SECONDS}s`,
      "--latency",
      "-H",
      "Host: example.test",
      `http://127.0.0.1:${port}/`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const r = parseWrk(new TextDecoder().decode(out.stdout));
  if (r.non2xx > 0 || r.connectErrors + r.readErrors + r.writeErrors + r.timeouts > 0) {
    throw new Error(`wrk saw errors: ${JSON.stringify(r)}`);
  }
  return r.requestsPerSec;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = await Deno.makeTempDir({ prefix: "scalwsd-ctlbench-" });
const port = quietPort(1);
await Deno.writeTextFile(
  `${dir}/scalws.yaml`,
  `server:
  listener_mode: reuseport
  listeners: [{name: http, address: "127.0.0.1:${port}"}]
  access_log: "off"
tenants:
  - name: t
    applications:
      - name: a
        domains: [example.test]
        runtime: {type: respond, body: "hello"}
`,
);
await Deno.writeTextFile(
  `${dir}/controller.yaml`,
  `state_dir: ${dir}/state
config: ${dir}/scalws.yaml
instances: {min: 1, max: 2, initial: 1}
cpus: "0-1"
metrics_base: "127.0.0.1:${quietPort(4)}"
probe_interval: 200ms
autoscaling: off
`,
);
const socket = `${dir}/state/control.sock`;
const ctl = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "--allow-all",
    "--unstable-net",
    MAIN,
    "controller",
    "--config",
    `${dir}/controller.yaml`,
  ],
  stdin: "null",
  stdout: "null",
  stderr: "null",
}).spawn();
const rows: string[] = [];
try {
  for (let i = 0; i < 100; i++) {
    try {
      await Deno.stat(socket);
      break;
    } catch {
      await sleep(50);
    }
  }
  for (const n of [1, 2]) {
    await control(socket, "/v1/scale", { method: "POST", body: JSON.stringify({ instances: n }) });
    const insts = await active(socket, n);
    await sleep(500);
    const idle = insts.map((x) => rssMiB(x.pid));
    await wrk(port); // warm-up
    const rps: number[] = [];
    for (let r = 0; r < RUNS; r++) rps.push(await wrk(port));
    const loaded = insts.map((x) => rssMiB(x.pid));
    rows.push(
      `${n} instance${n > 1 ? "s" : " "}  req/s median ${median(rps).toFixed(0).padStart(6)}  ` +
        `runs ${rps.map((x) => x.toFixed(0)).join(", ")}  RSS MiB idle ${
          idle.map((x) => x.toFixed(1)).join(", ")
        }` +
        `  after load ${loaded.map((x) => x.toFixed(1)).join(", ")}`,
    );
  }
} finally {
  await control(socket, "/v1/stop", { method: "POST" }).catch(() => {});
  await ctl.status;
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
console.log(
  `controller bench: respond, ${CONNECTIONS} connections, wrk -t1, ${RUNS} x ${SECONDS}s, ${navigator.hardwareConcurrency} CPUs`,
);
for (const r of rows) console.log(r);
