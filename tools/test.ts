/**
 * `deno task test`: the whole suite, or the files and flags given.
 *
 * With no file named, test files run two at a time (`deno test --parallel`: the suite is
 * mostly waiting on sockets and child processes, and each file's module loading is CPU work),
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

/** Files that read `Deno.memoryUsage()` of the test process: alone, after the rest. */
export const SERIAL = ["src/observe/memory_release_test.ts", "tests/cache_memory_test.ts"];

/** The `deno test` argument lists to run, in order. */
export function plan(args: readonly string[]): string[][] {
  const named = args.some((a) => !a.startsWith("-"));
  if (named) return [["test", ...FLAGS, ...args]];
  return [
    ["test", ...FLAGS, "--parallel", ...SERIAL.map((f) => `--ignore=${f}`), ...args],
    ["test", ...FLAGS, ...args, ...SERIAL],
  ];
}

if (import.meta.main) {
  let code = 0;
  for (const args of plan(Deno.args)) {
    const status = await new Deno.Command(Deno.execPath(), { args }).spawn().status;
    if (!status.success) code = status.code || 1;
  }
  Deno.exit(code);
}
