/**
 * A child process's whole output, bounded in time: past `timeoutMs` the child is killed
 * (SIGKILL), so a stuck browser or namespace run fails its test instead of hanging it.
 */

/** The output of `child` (spawned with stdout/stderr piped) and whether it had to be killed. */
export async function outputWithin(
  child: Deno.ChildProcess,
  timeoutMs: number,
): Promise<{ readonly out: Deno.CommandOutput; readonly killed: boolean }> {
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
  }, timeoutMs);
  try {
    const out = await child.output();
    return { out, killed };
  } finally {
    clearTimeout(timer);
  }
}
