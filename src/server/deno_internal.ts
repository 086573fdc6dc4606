/**
 * The Deno internals scalwsd depends on, kept in this one file. Deno 2.9.6 has no public API to
 * choose a certificate by SNI (only `listenTls` with the internal `unstableSniResolver` symbol,
 * which TLS listeners no longer use: it builds a TLS configuration per handshake, never resumes
 * sessions and keeps each answer for the listener's life; see `tls_relay.ts`),
 * nor to serve HTTP on one accepted connection (only the internal `serveHttpOnConnection`, which
 * is what gives scalwsd per-connection timeouts and limits). `deno_internal_test.ts` fails loudly
 * when a Deno upgrade removes or changes any of them.
 */

/** A certificate chain and its private key, both PEM. */
export interface KeyPair {
  readonly cert: string;
  readonly key: string;
}

/** HTTP served on one connection; the shape `serveHttpOnConnection` returns. */
export interface ConnServer {
  /** Settles when the connection is done. */
  readonly finished: Promise<void>;
  /** Graceful: in-flight requests finish, then the connection closes (h2: GOAWAY). */
  shutdown(): Promise<void>;
}

/** The request handler of one connection. */
export type ConnHandler = (
  req: Request,
  info: Deno.ServeHandlerInfo<Deno.Addr>,
) => Response | Promise<Response>;

interface Internals {
  readonly resolverSymbol: symbol;
  serveHttpOnConnection(
    conn: Deno.Conn,
    signal: AbortSignal | undefined,
    handler: ConnHandler,
    onError: (err: unknown) => Response,
    onListen: () => void,
  ): ConnServer;
}

function lookup(): Internals | string {
  const ns = (Deno as unknown as Record<symbol, Record<string, unknown> | undefined>)[
    (Deno as unknown as { internal: symbol }).internal
  ];
  if (ns === undefined) return "Deno[Deno.internal] is missing";
  if (typeof ns.resolverSymbol !== "symbol") return "Deno internal resolverSymbol is missing";
  if (typeof ns.serveHttpOnConnection !== "function") {
    return "Deno internal serveHttpOnConnection is missing";
  }
  return ns as unknown as Internals;
}

const found = lookup();

/** Why the internals are unusable with this Deno, or undefined when they are there. */
export const internalsProblem: string | undefined = typeof found === "string"
  ? `${found} (Deno ${Deno.version.deno}; scalwsd needs 2.9.x)`
  : undefined;

function need(): Internals {
  if (typeof found === "string") throw new Error(internalsProblem);
  return found;
}

/** Options of `listenTlsBySni`. */
export interface TlsListenOptions {
  readonly hostname: string;
  readonly port: number;
  readonly reusePort: boolean;
}

/**
 * Binds a TLS listener offering ALPN `h2` and `http/1.1` whose certificate is chosen by
 * `resolve(sni)` ("" when the client sent no SNI). Deno asks once per name and listener and
 * keeps the answer (errors included), so new certificates need a new listener.
 */
export function listenTlsBySni(
  opts: TlsListenOptions,
  resolve: (sni: string) => KeyPair,
): Deno.TlsListener {
  const i = need();
  const options: Record<string | symbol, unknown> = {
    hostname: opts.hostname,
    port: opts.port,
    alpnProtocols: ["h2", "http/1.1"],
    [i.resolverSymbol]: resolve,
  };
  if (opts.reusePort) options.reusePort = true;
  return Deno.listenTls(options as unknown as Deno.ListenTlsOptions & Deno.TlsCertifiedKeyPem);
}

function noop(): void {}

/** HTTP served on one connection, which scalwsd can also close at once. */
export interface ServedConnection extends ConnServer {
  /** Closes the connection now, whatever is in flight or still unread (idempotent). */
  kill(): void;
}

/** Set while `kill` aborts: Deno's abort handler throws when the connection already ended. */
let killing = false;
let guarded = false;

function guard(): void {
  if (guarded) return;
  guarded = true;
  // That throw happens inside an event listener, where it cannot be caught; only the global
  // error event sees it. Only a BadResource raised during a kill is swallowed.
  globalThis.addEventListener("error", (e) => {
    if (killing && e.error instanceof Deno.errors.BadResource) e.preventDefault();
  });
}

/**
 * Serves HTTP/1.1 on `conn`, or HTTP/2 when TLS negotiated `h2`, until the peer closes, the
 * server is shut down (graceful: in-flight requests finish, an idle connection closes), or
 * `kill()` closes it at once (the only way out while a request body is still unread).
 */
export function serveConnection(
  conn: Deno.Conn,
  handler: ConnHandler,
  onError: (err: unknown) => Response,
): ServedConnection {
  guard();
  const abort = new AbortController();
  const served = need().serveHttpOnConnection(conn, abort.signal, handler, onError, noop);
  return {
    finished: served.finished,
    shutdown: () => served.shutdown(),
    kill() {
      if (abort.signal.aborted) return;
      killing = true;
      try {
        abort.abort();
      } finally {
        killing = false;
      }
    },
  };
}

/**
 * The getter behind a `Headers` object's iteration (`Symbol("iterable headers")` on its
 * prototype): the entries as iteration yields them (lower-case names, sorted, equal names
 * joined, `set-cookie` apart) in one array, without an iterator object and a step per entry.
 * Undefined when a Deno upgrade removed it.
 */
const ITERABLE_HEADERS = Object.getOwnPropertySymbols(Headers.prototype).find((s) =>
  s.description === "iterable headers"
);

/** `[...headers]`, cheaper where Deno allows (`ITERABLE_HEADERS`); do not change the result. */
export function headerEntries(headers: Headers): readonly (readonly [string, string])[] {
  if (ITERABLE_HEADERS !== undefined) {
    const list = (headers as unknown as Record<symbol, unknown>)[ITERABLE_HEADERS];
    if (Array.isArray(list)) return list;
  }
  return [...headers];
}
