/**
 * The process's open file descriptors and their limit, for `process_open_fds` and
 * `process_max_fds` (the names Prometheus client libraries use). Deno reads `/proc/self` only
 * with every permission, so libc does it: `opendir`/`readdir` of `/proc/self/fd` and
 * `getrlimit(RLIMIT_NOFILE)`. Null on another system or without `--allow-ffi`.
 */

import { openLibc } from "../base/mod.ts";

const RLIMIT_NOFILE = 7;
/** `struct dirent`'s `d_name` in glibc and musl on 64-bit Linux. */
const D_NAME = 19;

/** Counts of the process's descriptors, read at scrape time. */
export interface FdCounter {
  /** Open descriptors (the one reading them left out). */
  open(): number;
  /** The soft limit of open descriptors. */
  max(): number;
}

/** The counter, or null where it cannot work. */
export function fdCounter(): FdCounter | null {
  const lib = openLibc({
    opendir: { parameters: ["buffer"], result: "pointer" },
    readdir: { parameters: ["pointer"], result: "pointer" },
    closedir: { parameters: ["pointer"], result: "i32" },
    getrlimit: { parameters: ["i32", "buffer"], result: "i32" },
  });
  if (lib === null) return null;
  const path = new TextEncoder().encode("/proc/self/fd\0");
  const limit = new BigUint64Array(2);
  const limitBytes = new Uint8Array(limit.buffer);
  return {
    open() {
      const dir = lib.opendir(path);
      if (dir === null) return 0;
      let n = 0;
      for (let e = lib.readdir(dir); e !== null; e = lib.readdir(dir)) {
        const v = new Deno.UnsafePointerView(e);
        // Skip "." and "..".
        if (v.getUint8(D_NAME) === 0x2e) {
          const c = v.getUint8(D_NAME + 1);
          if (c === 0 || (c === 0x2e && v.getUint8(D_NAME + 2) === 0)) continue;
        }
        n++;
      }
      lib.closedir(dir);
      return n - 1; // the directory's own descriptor
    },
    max() {
      return lib.getrlimit(RLIMIT_NOFILE, limitBytes) === 0 ? Number(limit[0]) : 0;
    },
  };
}
