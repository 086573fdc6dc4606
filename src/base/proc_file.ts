/**
 * Reads a small file under `/proc` (another process's `stat`, say). Deno 2.9.6 opens anything
 * under `/proc` only with every permission (`--allow-all`), which `deno task run` and the
 * compiled `scalwsd` do not have; there glibc's `open`/`read`/`close` read it (with
 * `--allow-ffi`). Not for large files: one read of at most 16 KiB.
 *
 * @module
 */

import { openLibc } from "./libc.ts";

const O_RDONLY = 0;
const O_CLOEXEC = 0o2000000;
/** Most bytes read (a `/proc/PID/stat` line is well under 1 KiB). */
const MAX_BYTES = 16384;

type ProcCalls = {
  open(path: Uint8Array, flags: number): number;
  read(fd: number, buf: Uint8Array, n: number | bigint): number | bigint;
  close(fd: number): number;
};

let calls: ProcCalls | null | undefined;
/** Deno refused a `/proc` read once: every later one goes straight to libc. */
let denoRefuses = false;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function libc(): ProcCalls | null {
  if (calls === undefined) {
    calls = openLibc({
      open: { parameters: ["buffer", "i32"], result: "i32" },
      read: { parameters: ["i32", "buffer", "usize"], result: "isize" },
      close: { parameters: ["i32"], result: "i32" },
    }) as ProcCalls | null;
  }
  return calls;
}

/** The text of `path`, or null when it cannot be read (no such file, no permission at all). */
export function readProcFile(path: string): string | null {
  if (!denoRefuses) {
    try {
      return Deno.readTextFileSync(path);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotCapable)) return null;
      denoRefuses = true;
    }
  }
  const lib = libc();
  if (lib === null) return null;
  const fd = lib.open(encoder.encode(path + "\0"), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return null;
  try {
    const buf = new Uint8Array(MAX_BYTES);
    const n = Number(lib.read(fd, buf, buf.length));
    return n < 0 ? null : decoder.decode(buf.subarray(0, n));
  } finally {
    lib.close(fd);
  }
}
