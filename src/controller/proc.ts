/**
 * Process identity from Linux `/proc`: a PID alone may have been reused, so a recorded
 * instance is only ours when its start time matches and it runs the recorded executable.
 */

/** What `/proc/PID` tells about a live process. */
export interface ProcInfo {
  /** One letter: R, S, D, Z (zombie: exited, not yet reaped), ... */
  readonly state: string;
  /** Clock ticks since boot (`stat` field 22). */
  readonly startTime: number;
  /** Target of `/proc/PID/exe`; null when it cannot be read. */
  readonly exe: string | null;
  /** Arguments from `/proc/PID/cmdline`. */
  readonly argv: readonly string[];
}

/** State and start time from the text of `/proc/PID/stat`. */
export function parseStat(text: string): { state: string; startTime: number } | null {
  // The command name (field 2) may contain spaces and parentheses: split after the last ")".
  const close = text.lastIndexOf(")");
  if (close < 0) return null;
  const fields = text.slice(close + 2).trim().split(" ");
  const startTime = Number(fields[19]);
  if (fields[0] === undefined || !Number.isFinite(startTime)) return null;
  return { state: fields[0], startTime };
}

/** Builds a `ProcInfo` from the three files; null for no process, a zombie or a dead one. */
export function procInfo(stat: string, exe: string | null, cmdline: string): ProcInfo | null {
  const s = parseStat(stat);
  if (s === null || s.state === "Z" || s.state === "X") return null;
  return {
    state: s.state,
    startTime: s.startTime,
    exe: exe === "" ? null : exe,
    argv: cmdline.split("\0").filter((a) => a !== ""),
  };
}

function readDirect(pid: number, root: string): ProcInfo | null {
  let stat: string;
  try {
    stat = Deno.readTextFileSync(`${root}/${pid}/stat`);
  } catch (err) {
    if (err instanceof Deno.errors.NotCapable) throw err;
    return null;
  }
  let exe: string | null = null;
  try {
    exe = Deno.readLinkSync(`${root}/${pid}/exe`);
  } catch { /* a kernel thread, or not ours to read */ }
  let cmdline = "";
  try {
    cmdline = Deno.readTextFileSync(`${root}/${pid}/cmdline`);
  } catch { /* gone meanwhile */ }
  return procInfo(stat, exe, cmdline);
}

const MARK = "--scalwsd-proc--";
const SEP = `\n${MARK}\n`;
// Prints stat, exe target and cmdline of PID $1 under root $2, separated by SEP; nothing if
// there is no such process.
const DUMP = `cat "$2/$1/stat" 2>/dev/null || exit 0; printf '\\n%s\\n' ${MARK}; ` +
  `readlink "$2/$1/exe" 2>/dev/null; printf '\\n%s\\n' ${MARK}; cat "$2/$1/cmdline" 2>/dev/null`;

async function readViaShell(pid: number, root: string): Promise<ProcInfo | null> {
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", DUMP, "scalwsd-proc", String(pid), root],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const [stat, exe, cmdline] = text.split(SEP);
  if (!stat || exe === undefined) return null;
  return procInfo(stat, exe.trim(), cmdline ?? "");
}

/**
 * The process, or null when there is none with this PID (or it is a zombie). Deno grants
 * reading another process's `/proc/PID` only with all permissions; without them the files are
 * read through `/bin/sh` (allowed by `--allow-run`).
 */
export async function readProc(pid: number, root = "/proc"): Promise<ProcInfo | null> {
  try {
    return readDirect(pid, root);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotCapable)) throw err;
    return await readViaShell(pid, root);
  }
}

/** `readProc` through the shell only (for tests of the fallback). */
export function readProcViaShell(pid: number, root = "/proc"): Promise<ProcInfo | null> {
  return readViaShell(pid, root);
}

/**
 * A small file under `/proc` (a sysctl), trimmed; null when unreadable. Like `readProc`, it
 * falls back to `cat` when Deno does not grant reading `/proc` directly.
 */
export async function readProcFile(path: string): Promise<string | null> {
  try {
    return Deno.readTextFileSync(path).trim();
  } catch (err) {
    if (!(err instanceof Deno.errors.NotCapable)) return null;
  }
  const out = await new Deno.Command("/bin/cat", {
    args: [path],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  return out.success ? new TextDecoder().decode(out.stdout).trim() : null;
}

/** What a record says about the process it started. */
export interface ExpectedProcess {
  readonly pid: number;
  readonly start_time: number;
  readonly executable: string;
  readonly id: string;
}

/**
 * Whether `info` is the recorded process: same start time, and the recorded executable (or,
 * for the milliseconds between spawn and exec, a command line naming the instance id).
 * Returns null when it is, else the reason it is not.
 */
export function mismatch(expected: ExpectedProcess, info: ProcInfo | null): string | null {
  if (info === null) return "no such process";
  if (info.startTime !== expected.start_time) {
    return `start time ${info.startTime} is not the recorded ${expected.start_time} (PID reused)`;
  }
  if (info.exe === expected.executable) return null;
  const i = info.argv.indexOf("--instance-id");
  if (i >= 0 && info.argv[i + 1] === expected.id) return null;
  return `executable ${info.exe ?? "(unreadable)"} is not the recorded ${expected.executable}`;
}
