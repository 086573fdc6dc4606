/**
 * SO_RCVLOWAT on TCP connections to a FastCGI server, through libc over FFI. With a low-water
 * mark above the answer's size, the kernel wakes scalwsd once per answer: when PHP-FPM closes
 * its side after END_REQUEST (as it does for a request without `FCGI_KEEP_CONN`, and the
 * FastCGI specification requires), rather than at each piece PHP writes (5 wake-ups and reads
 * per DokuWiki page before, each a cold start of the runtime on a machine busy with PHP).
 *
 * JavaScript does not see a socket's descriptor: a connection's is found by its local and peer
 * addresses (`getsockname`, `getpeername`). Linux gives a new socket the lowest free number, so
 * the number that was lowest free just before the connect ({@linkcode lowestFree}) is tried
 * first, then the descriptors that connections closed before it left, else `/proc/self/fd` (a
 * getsockname per open descriptor: with thousands of client connections, milliseconds).
 * Linux only, with `--allow-ffi`; elsewhere nothing is set and answers are read as they come.
 *
 * @module
 */

import {
  AF_INET,
  AF_INET6,
  openDescriptors,
  openLibc,
  type SocketCalls,
  socketCalls,
} from "../base/mod.ts";

const SOL_SOCKET = 1;
const SO_RCVLOWAT = 18;

/** open and close, to learn the lowest free descriptor number (`lowestFree`). */
type FdCalls = {
  open(path: Uint8Array, flags: number): number;
  close(fd: number): number;
};

let fdCalls: FdCalls | null | undefined;

function openFdCalls(): FdCalls | null {
  if (fdCalls !== undefined) return fdCalls;
  fdCalls = openLibc({
    open: { parameters: ["buffer", "i32"], result: "i32" },
    close: { parameters: ["i32"], result: "i32" },
  }) as unknown as FdCalls | null;
  return fdCalls;
}

const ROOT = new TextEncoder().encode("/\0");
/** O_PATH | O_CLOEXEC: a descriptor that opens nothing, only to learn its number. */
const O_PATH_CLOEXEC = 0o10000000 | 0o2000000;
const addr = new Uint8Array(128);
const addrLen = new Uint32Array(1);
const addrLenBytes = new Uint8Array(addrLen.buffer);
const value = new Int32Array(1);
const valueBytes = new Uint8Array(value.buffer);

/**
 * Descriptors of connections closed lately, lowest first: Linux gives a new socket the lowest
 * free number, so the next connection most likely has the first of them still free.
 */
const freed: number[] = [];
const FREED_MAX = 32;

/** Whether the address the kernel wrote into `addr` has `port` (and `ip4`'s bytes when IPv4). */
function matches(port: number, ip4: number): boolean {
  if (((addr[2] << 8) | addr[3]) !== port) return false;
  const family = addr[0] | (addr[1] << 8);
  if (family === AF_INET) {
    return ip4 < 0 ||
      ((addr[4] << 24) | (addr[5] << 16) | (addr[6] << 8) | addr[7]) >>> 0 === ip4;
  }
  return family === AF_INET6;
}

/** Addresses parsed before: every connection to one FastCGI server has the same two. */
const ips = new Map<string, number>();

/** An IPv4 address as one number; -1 for anything else (then the port alone is compared). */
function ip4Of(hostname: string): number {
  let ip = ips.get(hostname);
  if (ip === undefined) {
    if (ips.size >= 64) ips.clear();
    ips.set(hostname, ip = parseIp4(hostname));
  }
  return ip;
}

function parseIp4(hostname: string): number {
  const parts = hostname.split(".");
  if (parts.length !== 4) return -1;
  let v = 0;
  for (const p of parts) {
    const n = Number(p);
    if (!(n >= 0 && n <= 255) || p === "") return -1;
    v = v * 256 + n;
  }
  return v;
}

/** A connection's two ends: ports, and IPv4 addresses as numbers (-1: not compared). */
interface Ends {
  readonly localPort: number;
  readonly localIp: number;
  readonly peerPort: number;
  readonly peerIp: number;
}

const NOT_OPEN = 0;
const OTHER = 1;
const THIS = 2;

/** Whether descriptor `fd` is the TCP connection `e`, another socket, or not open. */
function which(c: SocketCalls, fd: number, e: Ends): number {
  addrLen[0] = addr.length;
  if (c.getsockname(fd, addr, addrLenBytes) !== 0) return NOT_OPEN;
  if (!matches(e.localPort, e.localIp)) return OTHER;
  addrLen[0] = addr.length;
  return c.getpeername(fd, addr, addrLenBytes) === 0 && matches(e.peerPort, e.peerIp)
    ? THIS
    : OTHER;
}

/**
 * The lowest descriptor number free now (opened on "/" and closed at once): the number a socket
 * made next most likely gets. -1 without libc.
 */
export function lowestFree(): number {
  const c = openFdCalls();
  if (c === null) return -1;
  const fd = c.open(ROOT, O_PATH_CLOEXEC);
  if (fd >= 0) c.close(fd);
  return fd;
}

/** The descriptor of the TCP connection `e` (`hint` tried first), or -1. */
function descriptorOf(c: SocketCalls, e: Ends, hint: number): number {
  if (hint >= 0 && which(c, hint, e) === THIS) return hint;
  // A number not open stays a candidate for the next connection; one that another socket took
  // leaves (`forget` adds it again if that is a connection of ours, closing).
  for (let i = 0; i < freed.length;) {
    const fd = freed[i];
    const w = which(c, fd, e);
    if (w === NOT_OPEN) {
      i++;
      continue;
    }
    freed.splice(i, 1);
    if (w === THIS) return fd;
  }
  for (const fd of openDescriptors(c)) {
    if (which(c, fd, e) === THIS) return fd;
  }
  return -1;
}

/**
 * The descriptor of `socket` when it is a TCP connection (a `Deno.TcpConn`) and libc can be
 * reached, else -1. Found once per connection, before any other code of this process may close
 * it (the number is then this socket's until `forget`). `hint`: {@linkcode lowestFree} just
 * before the connect.
 */
export function descriptor(socket: unknown, hint = -1): number {
  const s = socket as Partial<Deno.TcpConn>;
  const local = s.localAddr, peer = s.remoteAddr;
  if (local?.transport !== "tcp" || peer?.transport !== "tcp") return -1;
  const c = socketCalls();
  if (c === null) return -1;
  return descriptorOf(c, {
    localPort: local.port,
    localIp: ip4Of(local.hostname),
    peerPort: peer.port,
    peerIp: ip4Of(peer.hostname),
  }, hint);
}

/** The connection on `fd` is closing: its number is a likely one of the next. */
export function forget(fd: number): void {
  if (fd < 0 || freed.includes(fd)) return;
  let i = freed.length;
  while (i > 0 && freed[i - 1] > fd) i--;
  freed.splice(i, 0, fd);
  if (freed.length > FREED_MAX) freed.pop();
}

/** Sets `fd`'s SO_RCVLOWAT to `bytes` (1: wake at any byte, the default); false if refused. */
export function setLowWater(fd: number, bytes: number): boolean {
  const c = socketCalls();
  if (c === null || fd < 0) return false;
  value[0] = bytes;
  return c.setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, valueBytes, 4) === 0;
}
