/** Child processes of the benchmark: spawned with logs to files, always stopped at the end. */

interface Tracked {
  name: string;
  child: Deno.ChildProcess;
  /** Resolves when the child exited and its log stream is closed. */
  done: Promise<Deno.CommandStatus>;
  logPath?: string;
}

/** `cmd args` under `taskset -c cpus` when `cpus` is given. */
function pinned(cmd: string, args: string[], cpus: string | undefined): [string, string[]] {
  return cpus === undefined ? [cmd, args] : ["taskset", ["-c", cpus, cmd, ...args]];
}

/** Every process the bench started; `stopAll` ends them (SIGTERM, then SIGKILL after 5 s). */
export class Procs {
  readonly #tracked: Tracked[] = [];

  /**
   * Starts `cmd args`, stdout discarded, stderr appended to `logPath`; with `cpus` (a `taskset`
   * list such as "0"), on those CPUs only (taskset execs the command: the PID is the command's).
   */
  async spawn(
    name: string,
    cmd: string,
    args: string[],
    logPath: string,
    cpus?: string,
  ): Promise<Deno.ChildProcess> {
    const log = await Deno.open(logPath, { create: true, append: true });
    [cmd, args] = pinned(cmd, args, cpus);
    const child = new Deno.Command(cmd, { args, stdin: "null", stdout: "null", stderr: "piped" })
      .spawn();
    const piped = child.stderr.pipeTo(log.writable).catch(() => {});
    const done = Promise.all([child.status, piped]).then(([s]) => s);
    this.#tracked.push({ name, child, done, logPath });
    return child;
  }

  /** Runs `cmd args` to the end (stopped too by `stopAll`) and returns its output as text. */
  async output(
    name: string,
    cmd: string,
    args: string[],
    cpus?: string,
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    [cmd, args] = pinned(cmd, args, cpus);
    const child = new Deno.Command(cmd, { args, stdin: "null", stdout: "piped", stderr: "piped" })
      .spawn();
    const t: Tracked = { name, child, done: child.status };
    this.#tracked.push(t);
    try {
      const out = await child.output();
      const dec = new TextDecoder();
      return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
    } finally {
      const i = this.#tracked.indexOf(t);
      if (i >= 0) this.#tracked.splice(i, 1);
    }
  }

  /** Stops one tracked child; resolves when it has exited. */
  async stop(child: Deno.ChildProcess, graceMs = 5000): Promise<void> {
    const i = this.#tracked.findIndex((t) => t.child === child);
    if (i < 0) return;
    const [t] = this.#tracked.splice(i, 1);
    await stopOne(t, graceMs);
  }

  /** Stops every tracked child, newest first in parallel. */
  async stopAll(graceMs = 5000): Promise<void> {
    const all = this.#tracked.splice(0).reverse();
    await Promise.all(all.map((t) => stopOne(t, graceMs)));
  }

  /** Tracked children that already exited: name, exit code and the last lines of the log. */
  async exited(): Promise<string[]> {
    const out: string[] = [];
    for (const t of this.#tracked) {
      const s = await Promise.race([t.done, Promise.resolve(null)]);
      if (s === null) continue;
      let tail = "";
      try {
        if (t.logPath !== undefined) {
          tail = Deno.readTextFileSync(t.logPath).trimEnd().split("\n").slice(-5).join("\n    ");
        }
      } catch {
        // No log.
      }
      out.push(
        `${t.name} (exit ${s.code}${s.signal ? `, ${s.signal}` : ""})${
          tail ? `:\n    ${tail}` : ""
        }`,
      );
    }
    return out;
  }
}

/** What ends a bench run early; each is caught by `withProcs`. */
const STOP_SIGNALS: readonly Deno.Signal[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/**
 * Runs `fn` with a fresh `Procs` and temporary directory (`scalwsd-<name>-*`), then stops every
 * process it started and removes the directory (unless `keep`) on every way out: `fn`'s end,
 * its error (rethrown), and SIGINT, SIGTERM or SIGHUP (the process then exits with 130).
 */
export async function withProcs<T>(
  name: string,
  fn: (procs: Procs, dir: string) => Promise<T>,
  o: { readonly keep?: boolean } = {},
): Promise<T> {
  const procs = new Procs();
  const dir = await Deno.makeTempDir({ prefix: `scalwsd-${name}-` });
  let cleaning: Promise<void> | null = null;
  const cleanup = () =>
    cleaning ??= (async () => {
      await procs.stopAll();
      if (o.keep) console.log(`${name}: kept ${dir}`);
      else await Deno.remove(dir, { recursive: true }).catch(() => {});
    })();
  const onSignal = () => {
    console.error(`\n${name}: interrupted, stopping every process`);
    cleanup().finally(() => Deno.exit(130));
  };
  for (const s of STOP_SIGNALS) Deno.addSignalListener(s, onSignal);
  try {
    return await fn(procs, dir);
  } finally {
    await cleanup();
    for (const s of STOP_SIGNALS) Deno.removeSignalListener(s, onSignal);
  }
}

async function stopOne(t: Tracked, graceMs: number): Promise<void> {
  try {
    t.child.kill("SIGTERM");
  } catch {
    // Already gone.
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => timer = setTimeout(() => resolve("late"), graceMs));
  const r = await Promise.race([t.done, late]);
  clearTimeout(timer);
  if (r === "late") {
    try {
      t.child.kill("SIGKILL");
    } catch {
      // Exited meanwhile.
    }
    await t.done;
  }
}

/** `n` distinct free TCP ports on 127.0.0.1 (held open together while picking). */
export function freePorts(n: number): number[] {
  const held = [];
  try {
    for (let i = 0; i < n; i++) held.push(Deno.listen({ hostname: "127.0.0.1", port: 0 }));
    return held.map((l) => (l.addr as Deno.NetAddr).port);
  } finally {
    for (const l of held) l.close();
  }
}

/**
 * Waits until `url` answers 200, polling every 50 ms; throws after `timeoutMs`, or at once
 * when `alive()` turns false (the process died).
 */
export async function waitReady(
  url: string,
  timeoutMs: number,
  alive: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    if (!(await alive())) throw new Error(`Process behind ${url} exited before it was ready`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await res.body?.cancel();
      if (res.status === 200) return;
      last = `status ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`No 200 from ${url} within ${timeoutMs} ms (last: ${last})`);
}

/** Waits until `port` on 127.0.0.1 accepts a TCP connection; throws after `timeoutMs`. */
export async function waitListening(port: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`nothing listens on ${port}: ${err}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/**
 * Text of a /proc file, read through `cat`: Deno asks for --allow-all to read /proc directly,
 * while the bench task grants --allow-run. Undefined when unreadable.
 */
async function procText(path: string): Promise<string | undefined> {
  try {
    const out = await new Deno.Command("cat", {
      args: [path],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    return out.code === 0 ? new TextDecoder().decode(out.stdout) : undefined;
  } catch {
    return undefined;
  }
}

/** VmRSS of `pid` in KiB, from /proc/PID/status; undefined when unreadable. */
export async function rssKiB(pid: number): Promise<number | undefined> {
  const text = await procText(`/proc/${pid}/status`);
  const m = text === undefined ? null : /^VmRSS:\s+(\d+) kB/m.exec(text);
  return m === null ? undefined : Number(m[1]);
}

/** Children of single-threaded `pid` (/proc/PID/task/PID/children); empty when unreadable. */
export async function childPids(pid: number): Promise<number[]> {
  const text = (await procText(`/proc/${pid}/task/${pid}/children`))?.trim() ?? "";
  return text === "" ? [] : text.split(/\s+/).map(Number);
}

/** CPU time of a process in clock ticks. */
export interface CpuTicks {
  user: number;
  system: number;
}

/**
 * User and system CPU time of `pid` in clock ticks (/proc/PID/stat), plus that of its reaped
 * children when `children`; undefined when unreadable.
 */
export async function cpuTicks(pid: number, children = false): Promise<CpuTicks | undefined> {
  const text = await procText(`/proc/${pid}/stat`);
  if (text === undefined) return undefined;
  // Fields after the command name, which is in parentheses and may hold spaces: utime is
  // field 14, stime 15, cutime 16, cstime 17.
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ").map(Number);
  return children ? { user: f[11] + f[13], system: f[12] + f[14] } : { user: f[11], system: f[12] };
}

/** Busy clock ticks of the whole machine (/proc/stat: all but idle and iowait). */
export async function systemBusyTicks(): Promise<number | undefined> {
  const text = await procText("/proc/stat");
  const m = text === undefined ? null : /^cpu\s+(.*)$/m.exec(text);
  if (m === null) return undefined;
  const v = m[1].trim().split(/\s+/).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is inside user already)
  return v[0] + v[1] + v[2] + (v[5] ?? 0) + (v[6] ?? 0) + (v[7] ?? 0);
}

/** Clock ticks per second (`getconf CLK_TCK`), 100 when unknown. */
export async function clockTicks(): Promise<number> {
  try {
    const out = await new Deno.Command("getconf", {
      args: ["CLK_TCK"],
      stdout: "piped",
      stderr: "null",
    }).output();
    const n = Number(new TextDecoder().decode(out.stdout).trim());
    return n > 0 ? n : 100;
  } catch {
    return 100;
  }
}

/** Whether `name` runs: an absolute path that exists, or a name found on PATH. */
export function findExecutable(name: string): string | undefined {
  const candidates = name.includes("/")
    ? [name]
    : (Deno.env.get("PATH") ?? "").split(":").concat(["/usr/sbin", "/usr/bin"]).map((d) =>
      `${d}/${name}`
    );
  for (const c of candidates) {
    try {
      const st = Deno.statSync(c);
      if (st.isFile && ((st.mode ?? 0o111) & 0o111) !== 0) return c;
    } catch {
      // Try the next one.
    }
  }
  return undefined;
}
