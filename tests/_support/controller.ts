/**
 * The controller as a child process for end-to-end tests: `scalwsd controller` from source with
 * the `run` task's permissions, its event log collected; free port ranges for instances'
 * metrics listeners; calls over the control and admin sockets.
 */
import { readProc } from "../../src/controller/proc.ts";

export const MAIN = new URL("../../main.ts", import.meta.url).pathname;
export const RUN_FLAGS = [
  "run",
  "--unstable-net",
  "--allow-net",
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-run",
  "--allow-sys",
  "--allow-ffi",
];

export interface InstanceJson {
  id: string;
  pid: number;
  state: string;
  generation: number;
  wanted: boolean;
  adopted: boolean;
  metrics: string;
  failures: number[];
}

export interface StatusJson {
  controller: {
    pid: number;
    generation: number;
    desired: number;
    autoscaling: boolean;
    next_step: string;
    tcp_migrate_req: string | null;
    limits: { cpu_affinity: string };
  };
  instances: InstanceJson[];
  last_evaluation:
    | { class: string; action: string; reason: string; evidence: { id: string }[] }
    | null;
}

export function canBind(port: number): boolean {
  try {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
    return true;
  } catch {
    return false;
  }
}

/**
 * A base port with `count` free ports above it (the instances' metrics listeners), below the
 * ephemeral range so that no client connection takes one meanwhile.
 */
export function freeRange(count: number): number {
  let low = 32_768;
  try {
    low = Number(Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range").split(/\s+/)[0]);
  } catch { /* Deno grants /proc/sys only with --allow-all: assume the Linux default */ }
  for (let i = 0; i < 50; i++) {
    const base = 10_000 + Math.floor(Math.random() * (low - 10_000 - count));
    let ok = true;
    for (let p = base; p < base + count && ok; p++) ok = canBind(p);
    if (ok) return base;
  }
  throw new Error("no free port range");
}

export async function unixFetch(
  socket: string,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; json: unknown }> {
  using client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
  const res = await fetch(`http://localhost${path}`, { ...init, client });
  return { status: res.status, json: await res.json() };
}

export async function tcpText(address: string, path: string): Promise<string> {
  using client = Deno.createHttpClient({});
  const res = await fetch(`http://${address}${path}`, { client });
  return await res.text();
}

/** `scalwsd controller` as a child process, its event log collected line by line. */
export class ControllerProcess {
  readonly lines: string[] = [];
  private readonly child: Deno.ChildProcess;
  private readonly reading: Promise<void>;

  constructor(config: string) {
    this.child = new Deno.Command(Deno.execPath(), {
      args: [...RUN_FLAGS, MAIN, "controller", "--config", config],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const stderr = this.child.stderr;
    this.reading = (async () => {
      let rest = "";
      for await (const chunk of stderr.pipeThrough(new TextDecoderStream())) {
        rest += chunk;
        const parts = rest.split("\n");
        rest = parts.pop()!;
        this.lines.push(...parts);
      }
    })();
  }

  get pid(): number {
    return this.child.pid;
  }

  events(name: string): Record<string, unknown>[] {
    return this.lines.filter((l) => l.includes(`"event":"${name}"`)).map((l) => JSON.parse(l));
  }

  async stop(signal: Deno.Signal = "SIGTERM"): Promise<Deno.CommandStatus> {
    try {
      this.child.kill(signal);
    } catch { /* gone */ }
    const st = await this.child.status;
    await this.reading;
    return st;
  }

  /**
   * Ends the controller and its instances (a controller stopped by a signal leaves them running,
   * to re-adopt them): `POST /v1/stop` on its socket drains every instance; what still runs after
   * `timeoutMs` (the controller, or a process whose command line names `dir`) is killed.
   */
  async stopAll(socket: string, dir: string, timeoutMs = 10_000): Promise<void> {
    try {
      await unixFetch(socket, "/v1/stop", { method: "POST" });
    } catch { /* not listening (yet, or any more) */ }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ended = await Promise.race([
      this.child.status.then(() => true),
      new Promise<false>((r) => timer = setTimeout(() => r(false), timeoutMs)),
    ]);
    clearTimeout(timer);
    if (!ended) await this.stop("SIGKILL");
    else await this.reading;
    // Reading /proc needs --allow-all: pkill finds the instances by their configuration's path.
    await new Deno.Command("pkill", {
      args: ["-KILL", "-f", dir],
      stdout: "null",
      stderr: "null",
    }).output().catch(() => {});
  }

  async exited(): Promise<Deno.CommandStatus> {
    const st = await this.child.status;
    await this.reading;
    return st;
  }
}

/** Whether `pid` is still one of this test's instances (its command line names `dir`). */
export async function alive(pid: number, dir: string): Promise<boolean> {
  const p = await readProc(pid);
  return p !== null && p.argv.some((a) => a.includes(dir));
}
