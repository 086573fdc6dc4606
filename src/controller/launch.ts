/**
 * How the controller starts an instance: the scalwsd command with the instance's id,
 * generation, CPU set and per-instance sockets, pinned with `taskset` when available, its
 * output appended to a log file in the state directory. The process is detached (own
 * session) and writes to no pipe of the controller, so it keeps serving when the controller
 * stops.
 */

/** Everything that differs between instances. */
export interface InstanceLaunch {
  readonly id: string;
  /** The configuration generation to start on (`--generation`), and its file (`--config`). */
  readonly configGeneration: number;
  readonly configGenerationPath: string;
  /** Where the generation's relative paths resolve (`--base-dir`): its source file's directory. */
  readonly configBaseDir?: string;
  readonly cpus: readonly number[];
  readonly adminSocket: string;
  /** `host:port` of the instance's metrics listener. */
  readonly metrics: string;
  readonly drainTimeout: number;
  readonly logFile: string;
  /** The control socket (`--controller-socket`): member lists of api pools are set there. */
  readonly controlSocket?: string;
}

/**
 * The argument vector: `[taskset -c CPUS] <command...> run --config ... --instance-id ...`.
 * `command` is the scalwsd executable, or `deno run ... main.ts` from source.
 */
export function instanceArgv(
  l: InstanceLaunch,
  how: { readonly command: readonly string[]; readonly taskset: string | null },
): string[] {
  const { command, taskset } = how;
  const cpus = l.cpus.join(",");
  return [
    ...(taskset === null ? [] : [taskset, "-c", cpus]),
    ...command,
    "run",
    "--config",
    l.configGenerationPath,
    "--generation",
    String(l.configGeneration),
    "--instance-id",
    l.id,
    "--cpus",
    cpus,
    "--admin-socket",
    l.adminSocket,
    "--metrics-address",
    l.metrics,
    "--drain-timeout",
    `${l.drainTimeout}ms`,
    ...(l.controlSocket === undefined ? [] : ["--controller-socket", l.controlSocket]),
    ...(l.configBaseDir === undefined ? [] : ["--base-dir", l.configBaseDir]),
  ];
}

// `$1` is the log file; the rest is the command, exec'd so the PID stays the instance's.
const SHELL = 'umask 077; log=$1; shift; exec "$@" >>"$log" 2>&1';

/** `/bin/sh` arguments that run `argv` with its output appended to `logFile`. */
export function shellArgs(argv: readonly string[], logFile: string): string[] {
  return ["-c", SHELL, "scalwsd-instance", logFile, ...argv];
}

/** The CPUs of slot `index`: `perInstance` CPUs from `cpus`, handed out in turn. */
export function cpusFor(
  index: number,
  host: { readonly cpus: readonly number[]; readonly perInstance: number },
): number[] {
  const { cpus, perInstance } = host;
  const out: number[] = [];
  for (let i = 0; i < perInstance; i++) out.push(cpus[(index * perInstance + i) % cpus.length]);
  return [...new Set(out)].sort((a, b) => a - b);
}

/**
 * Spawns the instance; the caller watches `status` and records `pid`. The child is detached:
 * the controller may exit (after `unref()`) while it keeps serving.
 */
export function spawnInstance(argv: readonly string[], logFile: string): Deno.ChildProcess {
  const child = new Deno.Command("/bin/sh", {
    args: shellArgs(argv, logFile),
    stdin: "null",
    stdout: "null",
    stderr: "null",
    detached: true,
  }).spawn();
  return child;
}

/** The first of `candidates` that exists, or null. */
export function findExecutable(candidates: readonly string[]): string | null {
  for (const c of candidates) {
    try {
      if (Deno.statSync(c).isFile) return c;
    } catch { /* not here */ }
  }
  return null;
}

/**
 * The scalwsd command for instances: this executable when compiled, or the Deno binary
 * running `mainModule` from source (with the flags `deno task run` would pass).
 */
export function selfCommand(execPath: string, mainModule: string): string[] {
  const base = execPath.slice(execPath.lastIndexOf("/") + 1);
  if (!/^deno(\.exe)?$/.test(base)) return [execPath];
  const main = mainModule.startsWith("file://")
    ? decodeURIComponent(new URL(mainModule).pathname)
    : mainModule;
  return [execPath, "run", "--allow-all", "--unstable-net", main];
}
