/**
 * One round of the controller drain scenario of issue 29, as a user would run it: keep-alive
 * clients (`drain_clients.ts`) send without pause through `scalwsd controller` while it scales
 * 1 -> 3 (or N), rolls to a new configuration generation, and scales 3 -> 1. Every request is counted
 * per phase as answered, never sent, or failed. Used by `tests/drain_test.ts` (one short round)
 * and `bench/drain_soak.ts` (`deno task drain-soak`: ten rounds, with and without
 * `net.ipv4.tcp_migrate_req`).
 */

import { app, respond, scalwsYaml } from "./yaml.ts";
import { sleep, waitUntil } from "./wait.ts";
import { alive, ControllerProcess, freeRange, type StatusJson, unixFetch } from "./controller.ts";
import { FetchLoops, RawLoops, Tally } from "./drain_clients.ts";
import { startScalwsdProcess } from "./scalwsd_process.ts";

export const MIGRATE_REQ = "/proc/sys/net/ipv4/tcp_migrate_req";

/** Reads a sysctl file through `cat` (Deno opens /proc/sys only with all permissions). */
export async function readSysctl(path = MIGRATE_REQ): Promise<string | null> {
  const out = await new Deno.Command("cat", { args: [path], stdout: "piped", stderr: "null" })
    .output();
  return out.success ? new TextDecoder().decode(out.stdout).trim() : null;
}

/** Writes a sysctl file through `sh` (root only); whether it took. */
export async function writeSysctl(value: string, path = MIGRATE_REQ): Promise<boolean> {
  const out = await new Deno.Command("sh", {
    args: ["-c", `printf %s "$1" > "$2"`, "sh", value, path],
    stdout: "null",
    stderr: "null",
  }).output();
  return out.success && (await readSysctl(path)) === value;
}

export interface RoundOptions {
  /**
   * `controller`: the controller sets `tcp_migrate_req` (its default); `0` or `1`: the round
   * sets it so and tells the controller to leave it. The value from before the round is put
   * back after it.
   */
  readonly migrate: "controller" | "0" | "1";
  /** How long the load runs between two steps, ms; default 400. */
  readonly holdMs?: number;
  /** Client loops of each kind; default 4. */
  readonly loops?: number;
  /** Instances scaled out to and back from; default 3. */
  readonly instances?: number;
  /**
   * The raw loops open a new connection for every request (as `ab` without `-k`), not every
   * 200: what `tcp_migrate_req` is for.
   */
  readonly newConnections?: boolean;
  /** When a request failed, the instances' and the controller's logs are copied here. */
  readonly keepLogsIn?: string;
}

export interface RoundResult {
  readonly tally: Tally;
  /** How long each step took, ms, by phase name. */
  readonly durations: Map<string, number>;
  /** `tcp_migrate_req` as the controller reported it in `GET /v1/status`. */
  readonly migrateReq: string | null;
  /** The controller's events of interest (`tcp_migrate_req_*`). */
  readonly events: Record<string, unknown>[];
}

/** Runs one round; throws if the controller does not reach a step in time. */
export async function drainRound(o: RoundOptions): Promise<RoundResult> {
  const hold = o.holdMs ?? 400;
  const n = o.instances ?? 3;
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-drain-" });
  const port = freeRange(1);
  const config = `${dir}/scalws.yaml`;
  const instanceYaml = (body: string) =>
    scalwsYaml({
      server: {
        listener_mode: "reuseport",
        // Deno's fetch sends the URL's host: every host gets the application.
        default_host: "example.test",
        listeners: [{ name: "http", address: `127.0.0.1:${port}` }],
        admin: undefined,
        access_log: "off",
      },
      apps: [app(respond(body), { domains: ["example.test"] })],
    });
  await Deno.writeTextFile(config, instanceYaml("g1"));
  const ctlFile = `${dir}/controller.yaml`;
  await Deno.writeTextFile(
    ctlFile,
    `state_dir: ${dir}/state
config: ${config}
instances: {min: 1, max: ${n}, initial: 1}
cpus: "0-1"
metrics_base: "127.0.0.1:${freeRange(8)}"
probe_interval: 100ms
evaluation_interval: 250ms
drain_timeout: 5s
kill_grace: 1s
start_timeout: 20s
autoscaling: off
tcp_migrate_req: ${o.migrate === "controller" ? "enable" : "leave"}
`,
  );
  const socket = `${dir}/state/control.sock`;
  const pids = new Set<number>();
  let migrateReq: string | null = null;
  let last = "";
  const settled = (n: number, generation: number) =>
    waitUntil(async () => {
      const s = (await unixFetch(socket, "/v1/status")).json as StatusJson;
      last = `${s.controller.next_step}; ` +
        s.instances.map((i) => `${i.id} ${i.state} g${i.generation}`).join(", ");
      migrateReq = s.controller.tcp_migrate_req;
      for (const i of s.instances) if (i.pid > 0) pids.add(i.pid);
      const running = s.instances.filter((i) => !["stopped", "failed"].includes(i.state));
      return s.controller.next_step === "idle" && running.length === n &&
        running.every((i) => i.state === "active" && i.wanted && i.generation === generation);
    }, {
      what: `${n} active instances on generation ${generation}`,
      timeoutMs: 60_000,
      intervalMs: 50,
    }).catch((err) => {
      throw new Error(`${err.message}; last status: ${last}`);
    });
  const post = (path: string, body?: unknown) =>
    unixFetch(socket, path, {
      method: "POST",
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  const tally = new Tally();
  const durations = new Map<string, number>();
  let t0 = performance.now();
  const step = (next: string) => {
    const now = performance.now();
    durations.set(tally.phase, Math.round(now - t0));
    t0 = now;
    tally.phase = next;
  };
  const loops = o.loops ?? 4;
  const before = await readSysctl();
  if (o.migrate !== "controller" && !(await writeSysctl(o.migrate))) {
    throw new Error(`cannot set ${MIGRATE_REQ} to ${o.migrate} (not root?)`);
  }
  const ctl = new ControllerProcess(ctlFile);
  let fetches: FetchLoops | null = null;
  let raws: RawLoops | null = null;
  try {
    await settled(1, 1);
    step("steady 1");
    fetches = new FetchLoops(tally, { port, loops }).start();
    raws = new RawLoops(tally, { port, loops, reconnectEvery: o.newConnections ? 1 : 200 }).start();
    await sleep(hold);
    step(`scale 1->${n}`);
    await post("/v1/scale", { instances: n });
    await settled(n, 1);
    await sleep(hold);
    step("rolling reload");
    await Deno.writeTextFile(config, instanceYaml("g2"));
    const r = await post("/v1/reload");
    if (r.status !== 200) throw new Error(`reload: ${r.status} ${JSON.stringify(r.json)}`);
    await settled(n, 2);
    await sleep(hold);
    step(`scale ${n}->1`);
    await post("/v1/scale", { instances: 1 });
    await settled(1, 2);
    await sleep(hold);
    step("end");
  } finally {
    await fetches?.stop();
    await raws?.stop();
    await ctl.stopAll(socket, dir);
    for (const pid of pids) if (await alive(pid, dir)) Deno.kill(pid, "SIGKILL");
    if (o.keepLogsIn !== undefined && tally.totalFailed > 0) {
      const to = await Deno.makeTempDir({ dir: o.keepLogsIn, prefix: "drain-round-" });
      for await (const e of Deno.readDir(`${dir}/state/logs`)) {
        await Deno.copyFile(`${dir}/state/logs/${e.name}`, `${to}/${e.name}`);
      }
      await Deno.writeTextFile(`${to}/controller.log`, ctl.lines.join("\n"));
      await Deno.writeTextFile(`${to}/tally.txt`, tally.lines().join("\n"));
    }
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    if (before !== null) await writeSysctl(before);
  }
  const events = ctl.lines.filter((l) => l.includes('"event":"tcp_migrate_req'))
    .map((l) => JSON.parse(l));
  return { tally, durations, migrateReq, events };
}

/**
 * The single-process drain: keep-alive clients send to `scalwsd run` when it gets SIGTERM.
 * Every request must be answered or never sent (refused, or its connection closed before it
 * was written).
 */
export async function runDrainRound(
  o: { readonly holdMs?: number; readonly loops?: number } = {},
): Promise<Tally> {
  const hold = o.holdMs ?? 300;
  const loops = o.loops ?? 4;
  const p = await startScalwsdProcess(scalwsYaml({
    server: { admin: undefined, access_log: "off", default_host: "example.test" },
    apps: [app(respond("ok"), { domains: ["example.test"] })],
  }));
  const tally = new Tally();
  const port = p.port("http");
  let fetches: FetchLoops | null = null;
  let raws: RawLoops | null = null;
  try {
    tally.phase = "serving";
    fetches = new FetchLoops(tally, { port, loops }).start();
    raws = new RawLoops(tally, { port, loops }).start();
    await sleep(hold);
    // A loaded machine may answer few in `hold`: every loop has a kept-alive connection first.
    await waitUntil(() => tally.totalOk >= 4 * loops, {
      what: "answers before SIGTERM",
      timeoutMs: 15_000,
      intervalMs: 20,
    });
    tally.phase = "SIGTERM";
    const st = await p.stop();
    if (!st.success) throw new Error(`scalwsd run exited with ${st.code}:\n${p.lines.join("\n")}`);
    tally.phase = "end";
    await sleep(50);
  } finally {
    await fetches?.stop();
    await raws?.stop();
    await p[Symbol.asyncDispose]();
  }
  return tally;
}
