/**
 * TCP_NODELAY on a TLS listener's listening sockets, through libc over FFI; Linux copies it to
 * every socket accepted from them. Deno 2.9.6 gives a `Deno.TlsConn` no `setNoDelay` (only a
 * plain `Deno.TcpConn` has it), so without this every TLS connection runs with Nagle's
 * algorithm: HTTP/2 writes wait for the client's delayed ACK (about 40 ms), and a 30 MB download
 * with 64 KiB flow-control windows took 24.6 s instead of 0.6 s (measured, docs/tls.md). Set
 * once on the listening socket, it costs nothing per connection. Linux only (glibc's
 * `libc.so.6`); elsewhere, or without `--allow-ffi`, nothing is set and
 * `tcp_nodelay_unavailable` is logged once.
 *
 * JavaScript does not see a socket's descriptor, and Deno reads `/proc/self` only with every
 * permission: libc lists `/proc/self/fd`, and the listening sockets (`SO_ACCEPTCONN`) whose
 * local port (`getsockname`) is the listener's are the ones. Once per bind.
 *
 * @module
 */

import { log } from "../observe/mod.ts";
import { AF_INET, AF_INET6, openDescriptors, type SocketCalls, socketCalls } from "../base/mod.ts";

const IPPROTO_TCP = 6;
const TCP_NODELAY = 1;
const SOL_SOCKET = 1;
const SO_ACCEPTCONN = 30;

let warned = false;

/** Whether descriptor `fd` is a listening TCP socket bound to `port`. */
function listensOn(
  c: SocketCalls,
  fd: number,
  port: number,
  addr: Uint8Array,
  len: Uint32Array,
): boolean {
  len[0] = addr.length;
  if (c.getsockname(fd, addr, new Uint8Array(len.buffer)) !== 0) return false;
  const family = addr[0] | (addr[1] << 8);
  if (family !== AF_INET && family !== AF_INET6) return false;
  if (((addr[2] << 8) | addr[3]) !== port) return false;
  const on = new Int32Array(1);
  len[0] = 4;
  const r = c.getsockopt(
    fd,
    SOL_SOCKET,
    SO_ACCEPTCONN,
    new Uint8Array(on.buffer),
    new Uint8Array(len.buffer),
  );
  return r === 0 && on[0] === 1;
}

const ONE = new Uint8Array(new Int32Array([1]).buffer);

/**
 * Sets TCP_NODELAY on this process's listening sockets on `port` (any address): what they accept
 * from now on has it too. The number of sockets set; 0 where that is not possible (logged once).
 */
export function noDelayOnListeners(port: number): number {
  const c = socketCalls();
  if (c === null) {
    if (!warned) {
      warned = true;
      log("warn", "tcp_nodelay_unavailable", {
        reason: "needs Linux and --allow-ffi: TLS connections run with Nagle's algorithm",
      });
    }
    return 0;
  }
  const addr = new Uint8Array(128);
  const len = new Uint32Array(1);
  let set = 0;
  for (const fd of openDescriptors(c)) {
    if (!listensOn(c, fd, port, addr, len)) continue;
    if (c.setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, ONE, 4) === 0) set++;
  }
  return set;
}
