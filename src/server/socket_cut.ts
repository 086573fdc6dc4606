/**
 * Ends TCP connections Deno holds but will not close: a connection accepted by a
 * fixed-certificate `Deno.listenTls` (tls_direct.ts) whose TLS handshake does not finish.
 * Deno 2.9.6's `TlsConn.close()` then cancels the pending handshake, but the socket stays open
 * as long as the client keeps it so (measured: a client that sent nothing, or a ClientHello and
 * then nothing, stayed connected for minutes after `handshake_timeout`, holding a descriptor).
 * `shutdown(2)` through libc ends it: the client gets its FIN at once, the stalled read ends,
 * and Deno closes the descriptor. Batched: the connections cut in one turn of the event loop
 * (a sweep) cost one scan of `/proc/self/fd`. Without libc (not Linux, no `--allow-ffi`) it
 * does nothing and says so once (`tls_handshake_cut_unavailable`).
 *
 * @module
 */

import { formatIPv6, parseIP } from "../net/mod.ts";
import { log } from "../observe/mod.ts";
import { AF_INET, AF_INET6, openDescriptors, socketCalls } from "../base/mod.ts";

const SHUT_RDWR = 2;

/** `local port|peer address|peer port` of the connections to cut at the next scan. */
const pending = new Set<string>();
let scheduled = false;
let warned = false;

/** The key of a connection, the peer's address in canonical text. */
function key(localPort: number, peer: string, peerPort: number): string {
  return `${localPort}|${peer}|${peerPort}`;
}

/** The port (bytes 2-3) and address of a `sockaddr_in`/`sockaddr_in6`; null for others. */
function address(addr: Uint8Array): { port: number; ip: string } | null {
  const family = addr[0] | (addr[1] << 8);
  const port = (addr[2] << 8) | addr[3];
  if (family === AF_INET) return { port, ip: `${addr[4]}.${addr[5]}.${addr[6]}.${addr[7]}` };
  if (family !== AF_INET6) return null;
  const groups: number[] = [];
  for (let i = 8; i < 24; i += 2) groups.push((addr[i] << 8) | addr[i + 1]);
  return { port, ip: formatIPv6(groups) };
}

/**
 * Shuts down, soon (once this turn of the event loop is over), this process's TCP socket on
 * local port `localPort` connected to `peer`:`peerPort` (as Deno's `remoteAddr` gives them).
 */
export function cutSocket(localPort: number, peer: string, peerPort: number): void {
  const ip = parseIP(peer);
  if (ip === undefined) return;
  pending.add(key(localPort, ip.text, peerPort));
  if (scheduled) return;
  scheduled = true;
  setTimeout(flush, 0);
}

/** Scans the descriptors once for every connection asked for; the number shut down. */
export function flush(): number {
  scheduled = false;
  if (pending.size === 0) return 0;
  const c = socketCalls();
  if (c === null) {
    pending.clear();
    if (!warned) {
      warned = true;
      log("warn", "tls_handshake_cut_unavailable", {
        reason: "needs Linux and --allow-ffi: a TLS client that stalls its handshake on a " +
          "one-certificate listener stays connected past handshake_timeout",
      });
    }
    return 0;
  }
  const local = new Uint8Array(128);
  const remote = new Uint8Array(128);
  const len = new Uint32Array(1);
  const lenBytes = new Uint8Array(len.buffer);
  const ports = new Set([...pending].map((k) => Number(k.slice(0, k.indexOf("|")))));
  let cut = 0;
  for (const fd of openDescriptors(c)) {
    len[0] = local.length;
    if (c.getsockname(fd, local, lenBytes) !== 0) continue;
    const mine = address(local);
    if (mine === null || !ports.has(mine.port)) continue;
    len[0] = remote.length;
    if (c.getpeername(fd, remote, lenBytes) !== 0) continue; // a listening socket
    const peer = address(remote);
    if (peer === null) continue;
    const k = key(mine.port, peer.ip, peer.port);
    if (!pending.delete(k)) continue;
    if (c.shutdown(fd, SHUT_RDWR) === 0) cut++;
    if (pending.size === 0) break;
  }
  // Those not found were closed meanwhile.
  pending.clear();
  return cut;
}
