/**
 * The session of one request that came through Deno.serve (HTTP/2 over TLS): the `Request`,
 * the connection it came on when the listener tracks connections, `Response`s as its answers
 * (Deno.serve's fast paths: a byte body without `content-length`, a lone `content-type` as a
 * plain object), and the connection's books: a stream in flight is counted from `started` until
 * its answer was sent (`info.completed` for streamed bodies), a 101 ends the connection's HTTP
 * timeouts; an answer that left the body unread ends that stream only (hyper resets it).
 *
 * It is not Deno.serve's connection handling (`deno_internal.ts`, `listener.ts`): one object
 * per request, made by the listener's handler.
 *
 * @module
 */

import { type Answer, type HeadLimits, WEB_FORM, webResponse } from "../front/mod.ts";
import {
  type Ending,
  IN_THE_CLEAR,
  pathStart,
  type Session,
  type TlsLogFields,
  urlAuthority,
} from "../pipeline/mod.ts";
import { type ClientConn, UPGRADED } from "./client_conn.ts";
import { headerEntries } from "./deno_internal.ts";
import type { ResetWatch, Watched } from "./reset_watch.ts";

/** Header lines and their bytes over the limits (only called when a limit is below Deno's). */
function headersTooLarge(headers: Headers, limits: HeadLimits): boolean {
  const entries = headerEntries(headers);
  if (limits.maxHeaderCount > 0 && entries.length > limits.maxHeaderCount) return true;
  if (limits.maxHeaderSize <= 0) return false;
  let size = 0;
  for (let i = 0; i < entries.length; i++) size += entries[i][0].length + entries[i][1].length + 4;
  return size > limits.maxHeaderSize;
}

/** `a` and `b` name one authority: case aside, and `:443` (HTTP/2 is over TLS here) implied. */
function sameAuthority(a: string, b: string): boolean {
  if (a.length === b.length && a.toLowerCase() === b.toLowerCase()) return true;
  const strip = (s: string) => (s.endsWith(":443") ? s.slice(0, -4) : s).toLowerCase();
  return strip(a) === strip(b);
}

/**
 * Deno names a request that has neither `:authority` nor Host `localhost:PORT`, PORT being its
 * listener's: on a relayed connection that is the loopback TLS listener's port, which no client
 * can know, so such a name is Deno's, not the client's (on a direct listener it cannot be told
 * from a client's own `localhost:PORT`, and is taken as the client's).
 */
function madeUp(authority: string, conn: ClientConn | null): boolean {
  if (conn === null || conn.hop === null || !authority.startsWith("localhost:")) return false;
  return authority === `localhost:${(conn.conn.localAddr as Deno.NetAddr).port}`;
}

export class ServeSession implements Session, Watched {
  readonly protocol = "HTTP/2";
  readonly form = WEB_FORM;
  readonly upgrade = null;
  readonly target: string;
  readonly authority: string | null;
  readonly authorityError?: string;
  readonly peer: string;
  /** For the rapid-reset watch (reset_watch.ts), once `watchResets` was called. */
  since = 0;
  settled = false;
  private resets: ResetWatch | null = null;
  private onReset: ((weight: number) => void) | null = null;

  constructor(
    readonly req: Request,
    private readonly info: Deno.ServeHandlerInfo<Deno.Addr>,
    readonly secure: boolean,
    /** The client connection when the listener tracks its connections, else null. */
    private readonly conn: ClientConn | null,
  ) {
    const url = req.url;
    const ps = pathStart(url);
    this.target = ps === 0 ? url : url.slice(ps);
    // HTTP/2 carries the authority in the URL (`:authority`, or a Host field without it).
    const host = req.headers.get("host");
    const authority = secure ? urlAuthority(url) : host;
    if (host !== null && authority !== null && !sameAuthority(host, authority)) {
      // RFC 9113 8.3.1: a Host naming another entity than `:authority` makes it malformed.
      this.authority = null;
      this.authorityError = "Bad Request: Host header differs from :authority";
    } else if (host === null && authority !== null && madeUp(authority, conn)) {
      this.authority = null;
    } else this.authority = authority;
    this.peer = conn !== null ? conn.peer : (info.remoteAddr as Deno.NetAddr).hostname ?? "unix";
  }

  get port(): number {
    return this.conn !== null ? this.conn.port : 0;
  }

  get tls(): TlsLogFields {
    return this.conn !== null ? this.conn.tlsLog : IN_THE_CLEAR;
  }

  get address(): string {
    return this.conn !== null ? this.conn.address : "";
  }

  get peerPort(): number {
    return this.conn !== null
      ? this.conn.peerPort
      : (this.info.remoteAddr as Deno.NetAddr).port ?? 0;
  }

  get streams(): number {
    return this.conn !== null ? this.conn.active : 0;
  }

  get contentLength(): number {
    const cl = this.req.headers.get("content-length");
    return cl === null ? -1 : Number(cl);
  }

  headLimit(limits: HeadLimits): number {
    if (this.target.length > limits.maxUri) return 414;
    if (
      (limits.maxHeaderCount > 0 || limits.maxHeaderSize > 0) &&
      headersTooLarge(this.req.headers, limits)
    ) {
      return 431;
    }
    return 0;
  }

  misdirected(host: string): boolean {
    return this.conn !== null && this.conn.misdirected(host);
  }

  /** Deno.serve aborts the request's signal when the client resets the stream or closes. */
  watchGone(onGone: () => void): boolean {
    const signal = this.req.signal;
    if (signal.aborted) onGone();
    else signal.addEventListener("abort", onGone, { once: true });
    return true;
  }

  /** Calls `onReset` if the client resets the stream while the handler works (slow ones). */
  watchResets(w: ResetWatch, onReset: (weight: number) => void): void {
    this.resets = w;
    this.onReset = onReset;
    w.watch(this);
  }

  reset(weight: number): void {
    this.onReset?.(weight);
  }

  started(): void {
    if (this.conn !== null) this.conn.requestStarted();
  }

  finish(ex: Ending, answer: Answer, draining: boolean): Response {
    if (this.resets !== null) this.resets.settle(this);
    const res = webResponse(answer);
    if (draining) res.headers.set("connection", "close");
    const conn = this.conn;
    if (conn !== null) {
      // A tunnel is no HTTP request any more: the connection's HTTP timeouts end here.
      if (res.status === 101) conn.phase = UPGRADED;
      // A body left unread (413, 408, a member's early answer) ends its stream only: HTTP/2
      // frames each stream's data apart, so the connection's other streams go on.
      else if (ex.closeConnection || ex.deferred || ex.streaming) {
        this.info.completed.then(conn.done, conn.done);
      } else conn.requestDone();
    }
    return res;
  }
}
