/**
 * How a TLS listener terminates TLS, and the direct way's public socket.
 *
 * `direct`: a fixed-certificate `Deno.listenTls` on the public port. Measured on Deno 2.9.6
 * (bench/tls_ways.ts, docs/tls.md) it costs about half the CPU per keep-alive request of the
 * relay, under half per resumed connection, a third of the memory per idle connection and one
 * descriptor instead of three. It knows no SNI name, so it is taken only where that loses
 * nothing: a listener with one certificate (strict SNI is then "the certificate covers the
 * Host"; an unknown SNI gets that certificate, as it would anyway). Its certificate can only
 * change with a new socket: the new one is bound beside the old on the same port
 * (`SO_REUSEPORT`) and the old one closed, which refuses nothing only when the kernel moves the
 * old socket's pending connections to the new one (`net.ipv4.tcp_migrate_req = 1`, Linux 5.14+).
 *
 * `relay` (tls_relay.ts): everything else, and every TLS listener where
 * `tcp_migrate_req` is 0 or the process runs without `--unstable-net` (which `reusePort` needs).
 *
 * @module
 */

import { log } from "../observe/mod.ts";
import type { CertificateSet } from "./sni.ts";

/** Where `tcp_migrate_req` is read (per network namespace). */
const MIGRATE_REQ = "/proc/sys/net/ipv4/tcp_migrate_req";

/** What `termination` found about this process and host. */
export interface HostSupport {
  /** `net.ipv4.tcp_migrate_req` is 1. */
  readonly migrateReq: boolean;
  /** `Deno.listen({reusePort: true})` is allowed (`--unstable-net`). */
  readonly reusePort: boolean;
}

let found: HostSupport | null = null;

/** Reads `tcp_migrate_req` and the unstable network flag once per process. */
export function hostSupport(): HostSupport {
  if (found !== null) return found;
  let migrateReq = false;
  try {
    migrateReq = Deno.readTextFileSync(MIGRATE_REQ).trim() === "1";
  } catch {
    // Not Linux, or a kernel before 5.14: no migration.
  }
  // Deno 2 leaves unstable APIs out of the namespace without their flag; without it, asking for
  // reusePort would end the process.
  const reusePort = typeof (Deno as unknown as Record<string, unknown>).listenDatagram ===
    "function";
  found = { migrateReq, reusePort };
  return found;
}

/** For tests: forget what `hostSupport` read. */
export function resetHostSupport(): void {
  found = null;
}

/** How one TLS listener terminates TLS, and why (for the log). */
export interface Termination {
  readonly mode: "direct" | "relay";
  readonly reason: string;
}

/** The way a TLS listener with `certs` terminates TLS on a host with `host`. */
export function termination(
  certs: CertificateSet,
  host: HostSupport,
  unknownSni: "first" | "refuse" = "first",
): Termination {
  if (certs.pairs.length !== 1) {
    return { mode: "relay", reason: `${certs.pairs.length} certificates: chosen by SNI` };
  }
  if (unknownSni === "refuse") {
    return { mode: "relay", reason: "tls.unknown_sni is refuse: the SNI name must be read" };
  }
  if (!host.reusePort) {
    return { mode: "relay", reason: "no --unstable-net: reusePort is not available" };
  }
  if (!host.migrateReq) {
    return {
      mode: "relay",
      reason: `${MIGRATE_REQ} is 0: a new certificate on a new socket could refuse connections`,
    };
  }
  return { mode: "direct", reason: "one certificate, tcp_migrate_req 1" };
}

/** Logs how listener `name` terminates TLS (`tls_termination`, info). */
export function logTermination(name: string, t: Termination): void {
  log("info", "tls_termination", { listener: name, mode: t.mode, reason: t.reason });
}

/** The public TLS socket of a direct listener, bound with `SO_REUSEPORT` beside any other. */
export function listenDirect(
  hostname: string,
  port: number,
  certs: CertificateSet,
  alpn: readonly string[],
): Deno.TlsListener {
  const pair = certs.pairs[0];
  return Deno.listenTls(
    {
      hostname,
      port,
      cert: pair.cert,
      key: pair.key,
      alpnProtocols: [...alpn],
      reusePort: true,
    } as Deno.ListenTlsOptions & Deno.TlsCertifiedKeyPem,
  );
}
