/**
 * Members for end-to-end tests: small real servers on 127.0.0.1:0. Each is an
 * `AsyncDisposable`, so `await using m = startMember("a")` closes it when the test ends.
 */

/** A Deno.serve member. */
export interface Member extends AsyncDisposable {
  /** `127.0.0.1:PORT`. */
  readonly address: string;
  readonly port: number;
  /** Requests received. */
  count: number;
  close(): Promise<void>;
}

/** Handles one request to a member; `m` is the member (its `count` already includes this one). */
export type MemberHandler = (req: Request, m: Member) => Response | Promise<Response>;

/** A Deno.serve member on 127.0.0.1:0 answering with `handler` (default: its own name). */
export function startMember(name: string, handler?: MemberHandler): Member {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    m.count++;
    return handler ? handler(req, m) : new Response(name);
  });
  const close = () => server.shutdown();
  const m: Member = {
    address: `127.0.0.1:${server.addr.port}`,
    port: server.addr.port,
    count: 0,
    close,
    [Symbol.asyncDispose]: close,
  };
  return m;
}

/** Several members at once, one per name; disposing the list closes them all. */
export function startMembers(
  names: readonly string[],
  handler?: (name: string) => MemberHandler,
): Member[] & AsyncDisposable {
  return disposableList(names.map((n) => startMember(n, handler?.(n))));
}

/**
 * A list whose items are disposed in order when the list is: for connections or members made in
 * a loop (`await using conns = disposableList<RawConn>(); conns.push(...)`).
 */
export function disposableList<T extends AsyncDisposable>(
  items: T[] = [],
): T[] & AsyncDisposable {
  return Object.assign(items, {
    async [Symbol.asyncDispose]() {
      for (const item of items) await item[Symbol.asyncDispose]();
    },
  });
}

/** A raw TCP server on 127.0.0.1:0. */
export interface RawServer extends AsyncDisposable {
  readonly address: string;
  readonly port: number;
  /** Stops accepting, closes every connection and waits for their handlers. */
  close(): Promise<void>;
}

/** A raw TCP server: `onConn` gets every accepted connection; its throws are ignored. */
export function rawServer(onConn: (conn: Deno.TcpConn) => Promise<void> | void): RawServer {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.TcpConn>();
  const tasks = new Set<Promise<void>>();
  const loop = (async () => {
    for await (const conn of listener) {
      conns.add(conn);
      const t = (async () => {
        try {
          await onConn(conn);
        } catch { /* the test decides what a broken connection means */ }
      })();
      tasks.add(t);
      t.finally(() => tasks.delete(t));
    }
  })();
  const port = (listener.addr as Deno.NetAddr).port;
  const close = async () => {
    listener.close();
    await loop.catch(() => {});
    for (const c of conns) {
      try {
        c.close();
      } catch { /* already closed */ }
    }
    await Promise.all([...tasks]);
  };
  return { address: `127.0.0.1:${port}`, port, close, [Symbol.asyncDispose]: close };
}

/** Reads from `conn` until a blank line ends a request head; returns the head text. */
export async function readHead(conn: Deno.Conn): Promise<string> {
  const buf = new Uint8Array(65536);
  let text = "";
  while (!text.includes("\r\n\r\n")) {
    const n = await conn.read(buf);
    if (n === null) break;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  return text;
}
