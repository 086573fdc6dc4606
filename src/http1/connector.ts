/** Opens connections to one member: TCP (nodelay), Unix socket, or TLS over TCP. */

import type { MemberAddress } from "../net/mod.ts";
import { caCertsFor } from "./tls_roots.ts";
import type { Socket, SocketFactory, TlsSettings } from "./types.ts";
import { UpstreamError } from "./upstream_error.ts";
import { type Expirable, watchdog } from "./watchdog.ts";

/**
 * State of one connect attempt, its deadline on the shared watchdog (a connection per request,
 * as FastCGI's, would otherwise cost a timer and an AbortController each).
 */
class Attempt implements Expirable {
  #controller: AbortController | null = null;
  conn: Deno.Conn | null = null;
  timedOut = false;
  handshaking = false;
  expiresAt = 0;

  /** A TCP connect's signal (a Unix socket connect takes none). */
  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    return this.#controller.signal;
  }

  expire(): void {
    this.timedOut = true;
    this.#controller?.abort();
    // A TLS handshake has no signal: closing its socket ends it.
    if (this.conn !== null) closeQuietly(this.conn);
  }
}

function closeQuietly(conn: Socket): void {
  try {
    conn.close();
  } catch {
    // already closed
  }
}

/**
 * Connects to `address`; with `tls`, verifies the member's certificate against the system
 * roots plus `tls.caCerts` under `tls.serverName` (default: the member's host). The TLS
 * options are built once here; pass the same `TlsSettings` object to every member of a pool
 * so that the system roots are read once per pool.
 */
export class Connector implements SocketFactory {
  readonly address: MemberAddress;
  readonly watchable = true;
  readonly #tls: Deno.StartTlsOptions | null;

  constructor(address: MemberAddress, tls: TlsSettings | null) {
    this.address = address;
    if (tls !== null && address.kind === "unix") {
      throw new Error(`member "${address.canonical}" is a Unix socket and cannot use TLS`);
    }
    this.#tls = tls === null || address.kind === "unix" ? null : {
      hostname: tls.serverName || address.hostname,
      caCerts: caCertsFor(tls),
      alpnProtocols: ["http/1.1"],
    };
  }

  /**
   * Resolves to an open (and, for TLS, handshaken) connection. Rejects with `UpstreamError`
   * phase `connect`: kind `timeout` after `timeoutMs` (0: no limit), `tls` for a failed
   * handshake, `refused` for everything else (refused, no such socket, name not resolved).
   */
  async connect(timeoutMs: number): Promise<Socket> {
    const attempt = new Attempt();
    const a = this.address;
    // A Unix socket connects at once or fails (a full backlog refuses): no deadline to keep.
    if (a.kind !== "unix") watchdog.arm(attempt, timeoutMs);
    try {
      if (a.kind === "unix") {
        attempt.conn = await Deno.connect({ transport: "unix", path: a.path });
      } else {
        const tcp = await Deno.connect({
          hostname: a.hostname,
          port: a.port,
          signal: attempt.signal,
        });
        attempt.conn = tcp;
        tcp.setNoDelay(true);
        if (this.#tls !== null) {
          attempt.handshaking = true;
          const tls = await Deno.startTls(tcp, this.#tls);
          attempt.conn = tls;
          if (attempt.timedOut) closeQuietly(tls);
          await tls.handshake();
        }
      }
      if (attempt.timedOut) throw new Error("timed out");
      return attempt.conn;
    } catch (err) {
      if (attempt.conn !== null) closeQuietly(attempt.conn);
      const where = a.canonical;
      if (attempt.timedOut) {
        throw new UpstreamError(
          "connect",
          "timeout",
          `connect to ${where} timed out after ${timeoutMs} ms`,
          false,
          true,
        );
      }
      const detail = err instanceof Error ? err.message : String(err);
      if (attempt.handshaking) {
        throw new UpstreamError(
          "connect",
          "tls",
          `TLS handshake with ${where} failed: ${detail}`,
          false,
          false,
          err,
        );
      }
      const kind = err instanceof Deno.errors.ConnectionReset ? "reset" : "refused";
      throw new UpstreamError(
        "connect",
        kind,
        `connect to ${where} failed: ${detail}`,
        false,
        false,
        err,
      );
    } finally {
      watchdog.disarm(attempt);
    }
  }
}
