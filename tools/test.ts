/**
 * `deno task test`: the whole suite, or the files and flags given.
 *
 * First the Debian packages the tests need (`tools/test_packages.txt`, the one list, shared with
 * `.ci/run`): with no file named, missing ones are installed with apt-get (as root, or through
 * password-less sudo), saying which; where that cannot be done (no apt-get, neither root nor
 * sudo) it stops at once, naming the command to run. With files named, missing packages are only
 * reported. `--skip-packages` skips this step; `--packages-only` does only this step;
 * `--packages-file FILE` reads another list.
 *
 * With no file named, test files run three at a time (`deno test --parallel` with `DENO_JOBS`
 * set to `JOBS`: the suite is mostly waiting on sockets and child processes, so on a 2-core
 * machine a third file uses what two leave idle: 4 min 25 s with two, 3 min 42 s with three),
 * except the files that measure the process's own memory: in parallel mode every file shares
 * one process, so those run afterwards, one at a time. With files named, exactly those run,
 * one at a time, as `deno test` would.
 */
const FLAGS = [
  "--unstable-net",
  "--allow-net",
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-run",
  "--allow-sys",
  "--allow-ffi",
];

/** Test files run at once by the whole suite (`DENO_JOBS` in the environment overrides it). */
export const JOBS = 3;

/** Files that read `Deno.memoryUsage()` of the test process: alone, after the rest. */
export const SERIAL = ["src/observe/memory_release_test.ts", "tests/cache_memory_test.ts"];

/** The list of Debian packages the suite needs. */
export const PACKAGES_FILE = new URL("./test_packages.txt", import.meta.url);

/** The `deno test` argument lists to run, in order. */
export function plan(args: readonly string[]): string[][] {
  const named = args.some((a) => !a.startsWith("-"));
  if (named) return [["test", ...FLAGS, ...args]];
  return [
    ["test", ...FLAGS, "--parallel", ...SERIAL.map((f) => `--ignore=${f}`), ...args],
    ["test", ...FLAGS, ...args, ...SERIAL],
  ];
}

/** One line of `tools/test_packages.txt`: `package | check command | who needs it`. */
export interface TestPackage {
  readonly name: string;
  /** A shell command that succeeds when the package is installed. */
  readonly check: string;
  readonly why: string;
}

/** Parses `tools/test_packages.txt`; `#` lines and blank lines are skipped. */
export function parsePackages(text: string): TestPackage[] {
  const out: TestPackage[] = [];
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const parts = line.split("|").map((p) => p.trim());
    if (parts.length !== 3 || parts.some((p) => p === "")) {
      throw new Error(
        `tools/test_packages.txt:${i + 1}: expected "package | check | who needs it"`,
      );
    }
    out.push({ name: parts[0], check: parts[1], why: parts[2] });
  }
  return out;
}

/** What the machine allows: found by `probeMachine`, given by tests. */
export interface Machine {
  readonly aptGet: boolean;
  readonly root: boolean;
  /** `sudo -n true` succeeds. */
  readonly sudo: boolean;
}

/** What to do about the missing packages. */
export type PackagePlan =
  | { readonly kind: "ok" }
  | { readonly kind: "install"; readonly say: string; readonly commands: string[][] }
  | { readonly kind: "stop"; readonly say: string };

const APT_INSTALL = ["apt-get", "install", "-y", "-q", "--no-install-recommends"];
/** Wait for another apt-get (up to 5 minutes) rather than fail on the dpkg lock. */
const APT_LOCK = ["-o", "DPkg::Lock::Timeout=300"];

/** `missing` packages, and what this machine lets `deno task test` do about them. */
export function packagePlan(missing: readonly TestPackage[], machine: Machine): PackagePlan {
  if (missing.length === 0) return { kind: "ok" };
  const names = missing.map((p) => p.name);
  const list = missing.map((p) => `  ${p.name}: ${p.why}`).join("\n");
  const install = `apt-get install -y --no-install-recommends ${names.join(" ")}`;
  const line = `apt-get update && ${install}`;
  if (!machine.aptGet) {
    return {
      kind: "stop",
      say: `deno task test: the tests need these Debian packages, which are not installed:\n` +
        `${list}\nThis machine has no apt-get. On Debian the command is:\n  ${line}\n` +
        `Install the same programs with this system's package manager, or run ` +
        `"deno task test --skip-packages" to run the tests without them (the tests that need ` +
        `them fail).`,
    };
  }
  if (!machine.root && !machine.sudo) {
    return {
      kind: "stop",
      say: `deno task test: the tests need these Debian packages, which are not installed:\n` +
        `${list}\nThis user is not root and cannot use sudo without a password. ` +
        `Run this, then the tests again:\n  sudo apt-get update && sudo ${install}`,
    };
  }
  const sudo = machine.root ? [] : ["sudo", "-n"];
  return {
    kind: "install",
    say: `deno task test: installing the Debian packages the tests need:\n${list}\n` +
      `(${sudo.length > 0 ? "sudo " : ""}${line})`,
    commands: [
      [...sudo, "apt-get", ...APT_LOCK, "update", "-q"],
      [...sudo, ...APT_INSTALL, ...APT_LOCK, ...names],
    ],
  };
}

async function succeeds(cmd: string, args: string[]): Promise<boolean> {
  try {
    const out = await new Deno.Command(cmd, { args, stdout: "null", stderr: "null" }).output();
    return out.success;
  } catch {
    return false; // no such program
  }
}

/** The packages of `list` whose check command fails here (checks run at once). */
export async function missingPackages(list: readonly TestPackage[]): Promise<TestPackage[]> {
  const present = await Promise.all(list.map((p) => succeeds("sh", ["-c", p.check])));
  return list.filter((_, i) => !present[i]);
}

async function probeMachine(): Promise<Machine> {
  const [aptGet, root, sudo] = await Promise.all([
    succeeds("sh", ["-c", "command -v apt-get"]),
    succeeds("sh", ["-c", 'test "$(id -u)" = 0']),
    succeeds("sudo", ["-n", "true"]),
  ]);
  return { aptGet, root, sudo };
}

/** Installs what is missing (whole suite) or reports it (named files); false: stop. */
async function ensurePackages(install: boolean, file: string | URL): Promise<boolean> {
  const list = parsePackages(await Deno.readTextFile(file));
  const missing = await missingPackages(list);
  if (missing.length === 0) return true;
  if (!install) {
    console.error(
      `deno task test: not installed (the tests that need them fail): ` +
        `${missing.map((p) => `${p.name} (${p.why})`).join(", ")}; ` +
        `"deno task test --packages-only" installs them`,
    );
    return true;
  }
  const todo = packagePlan(missing, await probeMachine());
  if (todo.kind === "ok") return true;
  console.error(todo.say);
  if (todo.kind === "stop") return false;
  for (const [cmd, ...args] of todo.commands) {
    const status = await new Deno.Command(cmd, {
      args,
      env: { DEBIAN_FRONTEND: "noninteractive" },
      stdin: "null",
    }).spawn().status;
    if (!status.success) {
      console.error(`deno task test: "${[cmd, ...args].join(" ")}" failed (exit ${status.code})`);
      return false;
    }
  }
  const still = await missingPackages(list);
  if (still.length > 0) {
    console.error(
      `deno task test: still missing after apt-get: ${still.map((p) => p.name).join(", ")} ` +
        `(their checks in tools/test_packages.txt fail)`,
    );
    return false;
  }
  return true;
}

if (import.meta.main) {
  const skip = Deno.args.includes("--skip-packages");
  const only = Deno.args.includes("--packages-only");
  // --packages-file FILE: another list (the test of this script uses one).
  const at = Deno.args.indexOf("--packages-file");
  const file = at >= 0 ? Deno.args[at + 1] : PACKAGES_FILE;
  const args = Deno.args.filter((a, i) =>
    a !== "--skip-packages" && a !== "--packages-only" && (at < 0 || (i !== at && i !== at + 1))
  );
  const named = args.some((a) => !a.startsWith("-"));
  if (!skip && !(await ensurePackages(only || !named, file))) Deno.exit(1);
  if (only) Deno.exit(0);
  let code = 0;
  for (const testArgs of plan(args)) {
    const status = await new Deno.Command(Deno.execPath(), {
      args: testArgs,
      env: { DENO_JOBS: Deno.env.get("DENO_JOBS") ?? String(JOBS) },
    }).spawn().status;
    if (!status.success) code = status.code || 1;
  }
  Deno.exit(code);
}
