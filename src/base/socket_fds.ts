/**
 * This process's sockets by descriptor, through libc over FFI: JavaScript does not see a
 * socket's descriptor, and Deno reads `/proc/self` only with every permission, so libc lists
 * `/proc/self/fd` and asks each descriptor what it is (`getsockname`, `getpeername`,
 * `getsockopt`). Used to set TCP_NODELAY on TLS listening sockets and to end TLS connections
 * Deno will not close (server/tcp_nodelay.ts, server/socket_cut.ts), and to find a FastCGI
 * connection's descriptor for its low-water mark (fastcgi/low_water.ts). Linux only (glibc's
 * `libc.so.6`); null elsewhere or without `--allow-ffi`.
 *
 * @module
 */

import { openLibc } from "./libc.ts";

export const AF_INET = 2;
export const AF_INET6 = 10;
/** `struct dirent`'s `d_name` in glibc on 64-bit Linux. */
const D_NAME = 19;

/** The libc calls on sockets. */
export type SocketCalls = {
  opendir(path: Uint8Array): Deno.PointerValue;
  readdir(dir: Deno.PointerValue): Deno.PointerValue;
  closedir(dir: Deno.PointerValue): number;
  getsockname(fd: number, addr: Uint8Array, len: Uint8Array): number;
  getpeername(fd: number, addr: Uint8Array, len: Uint8Array): number;
  getsockopt(fd: number, level: number, name: number, value: Uint8Array, len: Uint8Array): number;
  setsockopt(fd: number, level: number, name: number, value: Uint8Array, len: number): number;
  shutdown(fd: number, how: number): number;
};

let calls: SocketCalls | null | undefined;

/** libc's socket calls, opened once; null where that is not possible. */
export function socketCalls(): SocketCalls | null {
  if (calls !== undefined) return calls;
  calls = openLibc({
    opendir: { parameters: ["buffer"], result: "pointer" },
    readdir: { parameters: ["pointer"], result: "pointer" },
    closedir: { parameters: ["pointer"], result: "i32" },
    getsockname: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
    getpeername: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
    getsockopt: { parameters: ["i32", "i32", "i32", "buffer", "buffer"], result: "i32" },
    setsockopt: { parameters: ["i32", "i32", "i32", "buffer", "u32"], result: "i32" },
    shutdown: { parameters: ["i32", "i32"], result: "i32" },
  }) as unknown as SocketCalls | null;
  return calls;
}

const FD_DIR = new TextEncoder().encode("/proc/self/fd\0");

/** The descriptors open in this process (those of `/proc/self/fd`, its own included). */
export function openDescriptors(c: SocketCalls): number[] {
  const dir = c.opendir(FD_DIR);
  if (dir === null) return [];
  const fds: number[] = [];
  for (let e = c.readdir(dir); e !== null; e = c.readdir(dir)) {
    const v = new Deno.UnsafePointerView(e);
    let fd = 0;
    let i = D_NAME;
    for (let ch = v.getUint8(i); ch !== 0; ch = v.getUint8(++i)) {
      if (ch < 0x30 || ch > 0x39) {
        fd = -1; // "." and ".."
        break;
      }
      fd = fd * 10 + ch - 0x30;
    }
    if (fd >= 0) fds.push(fd);
  }
  c.closedir(dir);
  return fds;
}
