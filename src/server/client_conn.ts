/**
 * One client connection as the listener, the connection timers and the sessions know it:
 * its phase (handshake, serving, upgraded, lingering, going away), its requests in flight and
 * idle time, its peer, listener port and TLS state (SNI name, `strict_sni`), HTTP/2 reset
 * counting and GOAWAY. Both fronts report to it: scalwsd's own HTTP/1.1 front through its
 * `ConnObserver` calls, Deno.serve's requests through `serve_session.ts`.
 *
 * It does not read or write the connection (the fronts do) and does not decide timeouts
 * (`conn_tracker.ts` sweeps them).
 *
 * @module
 */

import type { ServedConnection } from "./deno_internal.ts";
import type { CertificateSet } from "./sni.ts";
import type { Hop, TlsRelay } from "./tls_relay.ts";
import { cutSocket } from "./socket_cut.ts";
import { IN_THE_CLEAR, type TlsLogFields } from "../pipeline/mod.ts";

/**
 * A TLS listener's certificates as one connection saw them at its handshake; a reload that
 * keeps the certificates updates the settings in place.
 */
export interface TlsState {
  readonly certs: CertificateSet;
  /** `strict_sni`. */
  strict: boolean;
  /** Milliseconds. */
  handshakeTimeout: number;
  /** `tls.unknown_sni`: an SNI name no certificate has gets the first one, or an alert. */
  unknownSni: "first" | "refuse";
  /** The listener's TCP relay: who each loopback TLS connection really is. */
  relay: TlsRelay<ClientConn> | null;
}

/** The TLS handshake is running (bounded by `handshake_timeout`). */
export const HANDSHAKE = 0;
/** Serving HTTP: idle ones are bounded by `header_read_timeout` or `idle_timeout`. */
export const SERVING = 1;
/** Handed to a WebSocket: no HTTP timeout applies any more. */
export const UPGRADED = 2;
/** Closed or being closed. */
export const CLOSED = 3;
/** Answered with the request body unread, or half-closed: closed once `deadline` passes. */
export const LINGERING = 4;
/**
 * HTTP/2 told GOAWAY (idle, draining or abusive): its streams in flight may finish, and it is
 * closed once `deadline` passes with none left (an abusive one: whatever is left).
 */
export const GOING_AWAY = 5;

/**
 * How long a connection answered with its request body unread stays open (ms): long enough
 * for the answer to be written and read, the rest of the body being discarded meanwhile.
 */
export const LINGER = 500;

function ignore(): void {}

/**
 * One client connection: what the request path and the connection timers know of it. Times are
 * `performance.now()` milliseconds.
 */
export class ClientConn {
  phase = HANDSHAKE;
  /** Requests whose response is still being sent. */
  active = 0;
  /** Requests seen; 0 means the first request head is still awaited. */
  requests = 0;
  /** When `active` last dropped to 0 (or the connection started serving). */
  idleSince: number;
  /** End of the TLS handshake allowance, or of lingering. */
  deadline = 0;
  /** The SNI name the connection was opened with ("" for none); null when unknown. */
  sni: string | null = null;
  /** The port of the listener the client connected to (`SERVER_PORT` of PHP); 0: unknown. */
  port = 0;
  /** The local address the client connected to (`SERVER_ADDR` of PHP); "": unknown. */
  address = "";
  /** The peer's port (`REMOTE_PORT` of PHP); 0: unknown. */
  peerPort = 0;
  /** The TLS session as the access log writes it; set once the handshake is done. */
  tlsLog: TlsLogFields = IN_THE_CLEAR;
  /** Over `limit_conn`: every request gets 429 and the connection closes. */
  overLimit = false;
  /** Served as HTTP/2 (ALPN `h2`): closed with GOAWAY first. */
  h2 = false;
  /** Past `max_resets_per_second`: closed at its GOAWAY deadline, streams or not. */
  abusive = false;
  /** HTTP/2 streams reset in flight in the second that began at `resetsSince`. */
  private resets = 0;
  private resetsSince = 0;
  /** The TLS relay's hop it came through (TLS listeners), which can cut it at any time. */
  hop: Hop<ClientConn> | null = null;
  /**
   * Accepted by a direct TLS listener's public socket (tls_direct.ts): Deno keeps the socket
   * open while a handshake waits for the client, even once closed, and cannot end an HTTP/2
   * connection whose graceful shutdown waits for a PING the client does not answer; `close`
   * shuts such a socket down.
   */
  direct = false;
  server: ServedConnection | null = null;
  #done: (() => void) | null = null;
  #lingerOn: (() => void) | null = null;

  constructor(
    /** On a TLS listener, the public TCP connection until its TLS side is accepted. */
    public conn: Deno.Conn,
    /** The peer's address (`remoteAddr.hostname`). */
    readonly peer: string,
    /** Null for plain HTTP. */
    public tls: TlsState | null,
    now: number,
  ) {
    this.idleSince = now;
  }

  /**
   * `requestDone` bound once, for `info.completed` of streamed responses (Deno.serve only:
   * made on first use, so scalwsd's own front allocates no closure per connection).
   */
  get done(): () => void {
    return this.#done ??= () => this.requestDone();
  }

  /** `linger` bound once, for `info.completed` of answers that leave a body unread. */
  get lingerOn(): () => void {
    return this.#lingerOn ??= () => this.linger();
  }

  /**
   * Counts an HTTP/2 stream the client reset while its handler worked, `weight` times (see
   * reset_watch.ts); true when that makes more than `max` within a second.
   */
  resetSeen(now: number, max: number, weight = 1): boolean {
    if (now - this.resetsSince >= 1000) {
      this.resetsSince = now;
      this.resets = 0;
    }
    return (this.resets += weight) > max;
  }

  /**
   * HTTP/2: starts a graceful shutdown (GOAWAY; hyper names the last stream it processed once
   * the client answered its PING) and lets the connection tracker close the connection at
   * `deadline` (performance.now() ms) if it is still open then.
   */
  goAway(deadline: number): void {
    if (this.phase !== SERVING || this.server === null) return;
    this.phase = GOING_AWAY;
    this.deadline = deadline;
    this.server.shutdown().catch(ignore);
  }

  /**
   * A direct TLS connection closed at its deadline (by the sweep): one whose socket Deno keeps
   * open. Others (a handshake the TLS library refused, a client that left) Deno closes itself,
   * and are not worth a scan of the descriptors.
   */
  private timedOut(): boolean {
    return this.direct && performance.now() >= this.deadline;
  }

  /** The answer went out with the body unread: the connection closes after `LINGER`. */
  linger(): void {
    this.active--;
    if (this.phase === CLOSED) return;
    this.phase = LINGERING;
    this.deadline = performance.now() + LINGER;
  }

  /**
   * Our end was sent (a drain's half-close): the client's end is awaited for `LINGER`, then the
   * connection is closed.
   */
  halfClosed(): void {
    if (this.phase === CLOSED) return;
    this.phase = LINGERING;
    this.deadline = performance.now() + LINGER;
  }

  /** Handed to a tunnel (WebSocket): no HTTP timeout applies any more. */
  upgraded(): void {
    if (this.phase !== CLOSED) this.phase = UPGRADED;
  }

  /** A request arrived. */
  requestStarted(): void {
    this.active++;
    this.requests++;
  }

  /**
   * `strict_sni`: `host` must be the connection's SNI name or a name of the certificate that
   * name chose; when the name is unknown, a name of any certificate of the listener.
   */
  misdirected(host: string): boolean {
    const t = this.tls;
    if (t === null || !t.strict) return false;
    const sni = this.sni;
    return sni !== null ? !t.certs.serves(sni, host, this.hop?.offers) : !t.certs.covers(host);
  }

  /** A response was sent (or failed). */
  requestDone(): void {
    if (--this.active === 0) this.idleSince = performance.now();
  }

  /**
   * Closes the connection at once, in whatever phase. (Deno keeps the socket of a stalled TLS
   * handshake open until the peer sends or closes; the TLS relay's sockets are cut, which ends
   * it for the client too.)
   */
  close(): void {
    if (this.phase === CLOSED) return;
    const goingAway = this.phase === GOING_AWAY;
    const handshaking = this.phase === HANDSHAKE;
    this.phase = CLOSED;
    const server = this.server;
    if (server !== null) {
      // Deno cannot cancel a connection once its graceful shutdown began: the TLS relay can.
      if (goingAway && this.hop !== null) this.hop.cut();
      else {
        server.kill();
        // Nor on a direct listener, where no relay can cut it: its socket is shut down.
        if (goingAway && this.timedOut()) cutSocket(this.port, this.peer, this.peerPort);
      }
      return;
    }
    try {
      this.conn.close();
    } catch {
      ignore();
    }
    if (handshaking && this.timedOut()) cutSocket(this.port, this.peer, this.peerPort);
    // The TLS relay keeps copying until both sides end: end them too (a refused handshake's
    // alert first).
    if (this.hop?.refused !== true) this.hop?.cut();
  }
}
