/**
 * One worker process of a supervised application: started under the no-orphan wrapper, told
 * where to listen (`{socket}` or `{port}` in its argv and environment), Ready once its socket
 * accepts, its output logged line by line (bounded) with its worker id, stopped with SIGTERM
 * then SIGKILL.
 */

import type { AppRuntime } from "../config/mod.ts";
import { readProcFile } from "../base/mod.ts";
import { log } from "../observe/mod.ts";
import { wrapped } from "./wrapper.ts";

export type WorkerState = "starting" | "ready" | "draining" | "stopping" | "exited";

/** Lines of output logged per worker and second; more are counted and reported as dropped. */
const LINES_PER_SECOND = 50;
/** Longest line logged (bytes of text); the rest is cut. */
const MAX_LINE = 2048;
/** Between two readiness probes (ms). */
const PROBE_EVERY = 25;

/** Who a worker belongs to, for its log lines. */
export interface WorkerOwner {
  readonly tenant: string;
  readonly app: string;
  /** The private directory (0700) that holds the sockets and PID files. */
  readonly dir: string;
}

function substitute(s: string, listen: string): string {
  return s.replaceAll("{socket}", listen).replaceAll("{port}", listen);
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** A worker process and what the supervisor knows of it. */
export class Worker {
  state: WorkerState = "starting";
  /** Member address: `unix:DIR/wSEQ.sock` or `127.0.0.1:PORT`. */
  readonly address: string;
  readonly socket: string;
  readonly port: number;
  /** The application's PID (the wrapper's until the application's is known). */
  pid = 0;
  readonly startedAt = Date.now();
  readyAt = 0;
  /** Resolves with the exit status once the process is gone. */
  exited!: Promise<Deno.CommandStatus>;
  status: Deno.CommandStatus | null = null;
  private child: Deno.ChildProcess | null = null;
  private pipeClosed = false;
  private dropped = 0;
  private second = 0;
  private lines = 0;

  constructor(
    readonly owner: WorkerOwner,
    readonly runtime: AppRuntime,
    /** Slot number, 0 .. workers-1: the worker id of logs and views. */
    readonly id: number,
    /** Unique per process started in this application. */
    readonly seq: number,
  ) {
    if (runtime.listen === "port") {
      this.port = freePort();
      this.socket = "";
      this.address = `127.0.0.1:${this.port}`;
    } else {
      this.port = 0;
      this.socket = `${owner.dir}/w${seq}.sock`;
      this.address = `unix:${this.socket}`;
    }
  }

  private get pidFile(): string {
    return `${this.owner.dir}/w${this.seq}.pid`;
  }

  /** Starts the process. Throws when it cannot be started (no such command, bad cwd). */
  spawn(): void {
    const rt = this.runtime;
    const listen = rt.listen === "port" ? String(this.port) : this.socket;
    if (this.socket !== "") {
      try {
        Deno.removeSync(this.socket);
      } catch { /* not there */ }
    }
    const env: Record<string, string> = {
      SCALWS_PIDFILE: this.pidFile,
      SCALWS_WORKER: String(this.id),
      SCALWS_APP: `${this.owner.tenant}/${this.owner.app}`,
    };
    for (const [k, v] of Object.entries(rt.env)) env[k] = substitute(v, listen);
    const child = new Deno.Command("sh", {
      args: wrapped(rt.command.map((a) => substitute(a, listen))),
      cwd: rt.cwd,
      env,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.child = child;
    this.pid = child.pid;
    this.exited = child.status.then((s) => {
      this.status = s;
      this.state = "exited";
      return s;
    });
    this.pump(child.stdout, "stdout");
    this.pump(child.stderr, "stderr");
  }

  /** Reads the application's PID from the wrapper's file, once it is there. */
  private readPid(): void {
    if (this.pid !== this.child?.pid) return;
    try {
      const n = Number(Deno.readTextFileSync(this.pidFile).trim());
      if (n > 0) this.pid = n;
    } catch { /* not written yet */ }
  }

  /** Logs each line of `stream`, at most `LINES_PER_SECOND`, cut at `MAX_LINE`. */
  private async pump(stream: ReadableStream<Uint8Array>, name: string): Promise<void> {
    let rest = "";
    try {
      for await (const text of stream.pipeThrough(new TextDecoderStream())) {
        rest += text;
        let nl: number;
        while ((nl = rest.indexOf("\n")) >= 0) {
          this.line(name, rest.slice(0, nl));
          rest = rest.slice(nl + 1);
        }
        if (rest.length > MAX_LINE) {
          this.line(name, rest);
          rest = "";
        }
      }
    } catch { /* the process is gone */ }
    if (rest !== "") this.line(name, rest);
  }

  private line(stream: string, text: string): void {
    const s = Math.floor(Date.now() / 1000);
    if (s !== this.second) {
      if (this.dropped > 0) {
        log("warn", "app_output_dropped", { ...this.who(), lines: this.dropped });
      }
      this.second = s;
      this.lines = 0;
      this.dropped = 0;
    }
    if (++this.lines > LINES_PER_SECOND) {
      this.dropped++;
      return;
    }
    log("info", "app_output", { ...this.who(), stream, line: text.slice(0, MAX_LINE) });
  }

  who(): Record<string, unknown> {
    return { tenant: this.owner.tenant, app: this.owner.app, worker: this.id, pid: this.pid };
  }

  /**
   * Resolves true once the worker's socket accepts a connection, false when the process exits
   * first or `timeoutMs` passes.
   */
  async waitReady(timeoutMs: number): Promise<boolean> {
    const end = Date.now() + timeoutMs;
    while (this.status === null && Date.now() < end) {
      this.readPid();
      try {
        const c = this.port > 0
          ? await Deno.connect({ hostname: "127.0.0.1", port: this.port })
          : await Deno.connect({ transport: "unix", path: this.socket });
        c.close();
        this.readPid();
        if (this.status !== null) return false;
        this.state = "ready";
        this.readyAt = Date.now();
        return true;
      } catch {
        await new Promise((r) => setTimeout(r, PROBE_EVERY));
      }
    }
    return false;
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  async stop(graceMs = 5000): Promise<void> {
    if (this.child === null) return;
    if (this.status === null) this.state = "stopping";
    this.signal("SIGTERM");
    const timer = setTimeout(() => {
      this.signal("SIGKILL", this.pid);
      this.signal("SIGKILL");
    }, graceMs);
    try {
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
    this.cleanup();
  }

  /** Kills at once (tests, and the end of a failed start). */
  kill(): void {
    this.signal("SIGKILL", this.pid);
    this.signal("SIGKILL");
  }

  private signal(sig: Deno.Signal, pid = 0): void {
    try {
      if (pid > 0 && pid !== this.child?.pid) Deno.kill(pid, sig);
      else this.child?.kill(sig);
    } catch { /* already gone */ }
  }

  /** Removes the socket and PID file; closes the parent-death pipe. */
  cleanup(): void {
    for (const f of [this.socket, this.pidFile]) {
      if (f === "") continue;
      try {
        Deno.removeSync(f);
      } catch { /* gone */ }
    }
    if (this.child !== null && !this.pipeClosed) {
      this.pipeClosed = true;
      this.child.stdin.close().catch(() => {});
    }
  }

  /** The last CPU figure read (kept after the process is gone). */
  lastCpu = 0;

  /** User plus system CPU seconds of the application process, from `/proc`; the last known. */
  cpuSeconds(): number {
    this.readPid();
    const v = this.status === null ? procCpuSeconds(this.pid) : 0;
    if (v > this.lastCpu) this.lastCpu = v;
    return this.lastCpu;
  }
}

/** Clock ticks per second of `/proc/PID/stat` times (Linux: 100 everywhere in practice). */
const CLK_TCK = 100;

/** utime + stime of `pid` in seconds, or 0 when it cannot be read. */
export function procCpuSeconds(pid: number): number {
  if (pid <= 0) return 0;
  try {
    const stat = readProcFile(`/proc/${pid}/stat`);
    if (stat === null) return 0;
    // The command name may hold spaces: fields are counted after its closing parenthesis.
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return 0;
  }
}
