/**
 * A test file that runs itself again inside a network namespace of its own (`unshare -rn`: its
 * own loopback, its own sysctls such as `net.ipv4.tcp_migrate_req`), so the host's are never
 * touched. The outer run's one test calls `runSelfInNamespace`; the inner run (`INSIDE`) runs
 * the tests that need the namespace.
 */
import { outputWithin } from "./child_output.ts";

/** Set in the inner run. */
export const INSIDE = Deno.env.get("SCALWS_TEST_NETNS") === "1";

/** `unshare -rn` works here (a user namespace may be refused). */
export function canUnshare(): boolean {
  try {
    return new Deno.Command("unshare", { args: ["-rn", "true"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

/** What the inner `deno test` run printed, and how it ended. */
export interface NamespaceRun {
  readonly code: number;
  /** stdout then stderr. */
  readonly text: string;
}

/**
 * Runs `deno test --unstable-net -A FILE` inside a new network namespace, with loopback up and
 * `setup` (a shell command, run as the namespace's root) first. Killed after `timeoutMs`: the
 * text then ends with a line saying so, and the code is that of the kill.
 */
export async function runSelfInNamespace(
  file: string,
  { setup = "", timeoutMs = 180_000 }: { setup?: string; timeoutMs?: number } = {},
): Promise<NamespaceRun> {
  const script = `ip link set lo up && ${setup === "" ? "" : `${setup} && `}` +
    `exec "$0" test --unstable-net -A "$1"`;
  const child = new Deno.Command("unshare", {
    args: ["-rn", "sh", "-c", script, Deno.execPath(), file],
    env: { SCALWS_TEST_NETNS: "1", NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const { out, killed } = await outputWithin(child, timeoutMs);
  const dec = new TextDecoder();
  const text = dec.decode(out.stdout) + dec.decode(out.stderr) +
    (killed ? `\nkilled: the run inside the namespace took more than ${timeoutMs} ms\n` : "");
  return { code: out.code, text };
}
