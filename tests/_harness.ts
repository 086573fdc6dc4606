/**
 * End-to-end test helpers: real member servers on 127.0.0.1:0, raw socket servers that misbehave
 * on purpose, and a scalwsd started in-process from YAML text. Loopback and Unix sockets only.
 */
import { Server, type ServerOptions } from "../src/server/server.ts";
import { AdminListeners } from "../src/server/admin_listeners.ts";
import { setLogSink } from "../src/observe/log.ts";

export interface Member {
  readonly address: string;
  readonly port: number;
  /** Requests received. */
  count: number;
  close(): Promise<void>;
}

/** A Deno.serve member on 127.0.0.1:0 answering with `handler` (default: its own name). */
export function startMember(
  name: string,
  handler?: (req: Request, m: Member) => Response | Promise<Response>,
): Member {
  const m: Member = {
    address: "",
    port: 0,
    count: 0,
    close: () => server.shutdown(),
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    m.count++;
    return handler ? handler(req, m) : new Response(name);
  });
  (m as { port: number }).port = server.addr.port;
  (m as { address: string }).address = `127.0.0.1:${server.addr.port}`;
  return m;
}

/** A raw TCP server: `onConn` gets every accepted connection. */
export function rawServer(onConn: (conn: Deno.TcpConn) => Promise<void> | void): {
  address: string;
  port: number;
  close(): Promise<void>;
} {
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
  return {
    address: `127.0.0.1:${port}`,
    port,
    async close() {
      listener.close();
      await loop.catch(() => {});
      for (const c of conns) {
        try {
          c.close();
        } catch { /* already closed */ }
      }
      await Promise.all([...tasks]);
    },
  };
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

export interface Running {
  readonly server: Server;
  readonly admin: AdminListeners;
  /** `http://127.0.0.1:PORT` of the first listener. */
  readonly url: string;
  readonly dir: string;
  readonly file: string;
  /** Event log lines captured while running. */
  readonly logs: string[];
  /** Rewrites the config file (for reloads). */
  write(yaml: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts scalwsd in-process. `yaml` may use `{{dir}}` for a temporary directory (admin socket
 * paths). Listeners should use port 0.
 */
export async function startScalwsd(yaml: string, options: ServerOptions = {}): Promise<Running> {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-test-" });
  const file = `${dir}/scalws.yaml`;
  const fill = (y: string) => y.replaceAll("{{dir}}", dir);
  await Deno.writeTextFile(file, fill(yaml));
  const logs: string[] = [];
  setLogSink((l) => logs.push(l));
  const server = await Server.prepare(file, { accessLog: "off", ...options });
  await server.bind();
  const admin = new AdminListeners(server);
  await admin.start();
  const first = [...server.bound.values()][0];
  return {
    server,
    admin,
    url: first ? `http://127.0.0.1:${first.port}` : "",
    dir,
    file,
    logs,
    write: (y) => Deno.writeTextFile(file, fill(y)),
    async close() {
      await admin.stop();
      await server.drain();
      setLogSink(null);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** A fetch client over a Unix socket (the admin socket). */
export async function adminFetch(
  socket: string,
  path: string,
  init: RequestInit = {},
): Promise<Response> {
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
  try {
    const res = await fetch(`http://localhost${path}`, { ...init, client });
    const body = await res.arrayBuffer();
    return new Response(res.status === 204 || res.status === 304 ? null : body, {
      status: res.status,
      headers: res.headers,
    });
  } finally {
    client.close();
  }
}

export interface RawResponse {
  status: number;
  text: string;
  headers: Headers;
  bytes: Uint8Array;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function dechunk(body: Uint8Array): Uint8Array {
  const dec = new TextDecoder();
  let out: Uint8Array = new Uint8Array(0);
  let i = 0;
  for (;;) {
    let j = i;
    while (j + 1 < body.length && !(body[j] === 13 && body[j + 1] === 10)) j++;
    const size = parseInt(dec.decode(body.subarray(i, j)), 16);
    if (!(size > 0)) return out;
    out = concat(out, body.subarray(j + 2, j + 2 + size));
    i = j + 2 + size + 2;
  }
}

/**
 * One HTTP/1.1 request over a fresh connection with `Connection: close`, so any Host can be
 * sent (fetch does not let a test choose it). Reads the whole response.
 */
export async function request(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array } = {},
): Promise<RawResponse> {
  const u = new URL(url);
  const conn = await Deno.connect({ hostname: u.hostname, port: Number(u.port) });
  try {
    const method = init.method ?? "GET";
    const body = typeof init.body === "string" ? new TextEncoder().encode(init.body) : init.body;
    const headers: Record<string, string> = { host: u.host, ...init.headers, connection: "close" };
    if (
      body !== undefined && headers["content-length"] === undefined &&
      headers["transfer-encoding"] === undefined
    ) {
      headers["content-length"] = String(body.length);
    }
    let head = `${method} ${u.pathname}${u.search} HTTP/1.1\r\n`;
    for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
    await conn.write(new TextEncoder().encode(head + "\r\n"));
    if (body !== undefined) await conn.write(body);
    let all: Uint8Array = new Uint8Array(0);
    const buf = new Uint8Array(65536);
    for (;;) {
      let n: number | null;
      try {
        n = await conn.read(buf);
      } catch {
        break;
      }
      if (n === null) break;
      all = concat(all, buf.subarray(0, n));
    }
    let end = -1;
    for (let i = 0; i + 3 < all.length; i++) {
      if (all[i] === 13 && all[i + 1] === 10 && all[i + 2] === 13 && all[i + 3] === 10) {
        end = i;
        break;
      }
    }
    if (end < 0) {
      throw new Error(`no response head: ${JSON.stringify(new TextDecoder().decode(all))}`);
    }
    const lines = new TextDecoder().decode(all.subarray(0, end)).split("\r\n");
    const status = Number(lines[0].split(" ")[1]);
    const h = new Headers();
    for (const l of lines.slice(1)) {
      const c = l.indexOf(":");
      h.append(l.slice(0, c).trim(), l.slice(c + 1).trim());
    }
    let bytes: Uint8Array = all.subarray(end + 4);
    if ((h.get("transfer-encoding") ?? "").includes("chunked")) bytes = dechunk(bytes);
    return { status, text: new TextDecoder().decode(bytes), headers: h, bytes };
  } finally {
    try {
      conn.close();
    } catch { /* closed */ }
  }
}

/** GETs `url` with optional headers (a `host` header picks the virtual host). */
export function get(url: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return request(url, { headers });
}
