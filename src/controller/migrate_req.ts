/**
 * `net.ipv4.tcp_migrate_req`: when an instance closes its `reusePort` listening socket (a
 * drain), connections queued on it move to another socket of the group if it is 1, and are
 * reset if it is 0 (the default on most hosts). The controller sets it to 1 in its network
 * namespace when it may (root, or `CAP_NET_ADMIN`), and otherwise says what to set.
 *
 * Deno opens files under /proc/sys only with all permissions: the value is read and written
 * through `cat` and `sh` when it must.
 */

import { readProcFile } from "./proc.ts";

export const MIGRATE_REQ_FILE = "/proc/sys/net/ipv4/tcp_migrate_req";

/** What an operator should do when the value is not 1. */
export const MIGRATE_REQ_FIX =
  "set net.ipv4.tcp_migrate_req=1 (sysctl -w net.ipv4.tcp_migrate_req=1, and a file in " +
  "/etc/sysctl.d/ to keep it), or run the controller as root or with CAP_NET_ADMIN";

/** The value found, what the controller did about it, and the warning to show if any. */
export interface MigrateReqState {
  /** The value now ("0", "1"); null when it cannot be read (an old kernel, no /proc). */
  readonly value: string | null;
  /** The value before the controller set it; null when it did not. */
  readonly previous: string | null;
  /** Null when the value is 1. */
  readonly warning: string | null;
}

export interface MigrateReqDeps {
  readonly read: () => Promise<string | null>;
  /** Writes `value`; false when not allowed or it failed. */
  readonly write: (value: string) => Promise<boolean>;
}

/** Reads and writes the real file (directly, else through `cat` and `sh`). */
export const procMigrateReq: MigrateReqDeps = {
  read: () => readProcFile(MIGRATE_REQ_FILE),
  async write(value) {
    try {
      Deno.writeTextFileSync(MIGRATE_REQ_FILE, value);
      return true;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotCapable)) return false;
    }
    try {
      const out = await new Deno.Command("/bin/sh", {
        args: ["-c", 'printf %s "$1" > "$2"', "sh", value, MIGRATE_REQ_FILE],
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).output();
      return out.success;
    } catch {
      return false;
    }
  },
};

/**
 * Makes the value 1 when `mode` is `enable` and it is not (checking that the write took);
 * `leave` only reads it.
 */
export async function ensureMigrateReq(
  mode: "enable" | "leave",
  deps: MigrateReqDeps = procMigrateReq,
): Promise<MigrateReqState> {
  const value = await deps.read();
  if (value === "1") return { value, previous: null, warning: null };
  if (value === null) {
    return {
      value,
      previous: null,
      warning: "net.ipv4.tcp_migrate_req cannot be read (a kernel older than 5.14?): " +
        "connections queued on a draining instance's listening socket may be reset",
    };
  }
  if (mode === "enable" && await deps.write("1")) {
    const now = await deps.read();
    if (now === "1") return { value: now, previous: value, warning: null };
  }
  return {
    value,
    previous: null,
    warning: `net.ipv4.tcp_migrate_req is ${value}: connections queued on a draining ` +
      `instance's listening socket are reset instead of moving to another instance; ` +
      MIGRATE_REQ_FIX,
  };
}
