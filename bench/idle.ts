/**
 * The `idle-10k` measurement: many keep-alive client connections, each having made one request,
 * held open and idle, and how much the proxy's resident memory grew for them.
 */

import * as tls from "node:tls";

const enc = new TextEncoder();

/** What `closeAll` ends: a Deno connection or a node:tls socket. */
export type Held = Deno.Conn | tls.TLSSocket;

/** Opens one connection, sends one GET of `path` and reads until `body` has arrived. */
async function openOne(port: number, path: string, body: string): Promise<Deno.Conn> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(enc.encode(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
  const buf = new Uint8Array(4096);
  let text = "";
  while (!text.endsWith(body)) {
    const n = await conn.read(buf);
    if (n === null) throw new Error(`connection closed before the answer to ${path}`);
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  return conn;
}

/**
 * Opens `count` idle keep-alive connections to `port` (in batches of `batch`), each after one
 * request whose answer ends with `body`. The caller closes them with `closeAll`.
 */
export async function holdIdle(
  port: number,
  path: string,
  body: string,
  count: number,
  batch = 250,
): Promise<Deno.Conn[]> {
  const conns: Deno.Conn[] = [];
  try {
    for (let done = 0; done < count; done += batch) {
      const n = Math.min(batch, count - done);
      conns.push(...await Promise.all(Array.from({ length: n }, () => openOne(port, path, body))));
    }
  } catch (err) {
    closeAll(conns);
    throw err;
  }
  return conns;
}

/** One TLS connection (SNI `host`, any certificate), one GET /, read until `body` arrived. */
function openTls(port: number, host: string, body: string): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    // The bench's certificates are self-signed; what is measured is the server's memory.
    const c = tls.connect({
      host: "127.0.0.1",
      port,
      servername: host,
      rejectUnauthorized: false,
      ALPNProtocols: ["http/1.1"],
    }, () => c.write(`GET / HTTP/1.1\r\nHost: ${host}\r\n\r\n`));
    let text = "";
    c.setEncoding("latin1");
    c.on("data", (d: string) => {
      text += d;
      if (text.endsWith(body)) resolve(c);
    });
    c.once("error", reject);
    c.once("end", () => reject(new Error("TLS connection closed before the answer")));
  });
}

/** {@link holdIdle} over TLS: `count` idle TLS keep-alive connections to `port`. */
export async function holdIdleTls(
  port: number,
  host: string,
  body: string,
  count: number,
  batch = 250,
): Promise<tls.TLSSocket[]> {
  const conns: tls.TLSSocket[] = [];
  try {
    for (let done = 0; done < count; done += batch) {
      const n = Math.min(batch, count - done);
      conns.push(...await Promise.all(Array.from({ length: n }, () => openTls(port, host, body))));
    }
  } catch (err) {
    closeAll(conns);
    throw err;
  }
  return conns;
}

/** Closes every connection of `conns`. */
export function closeAll(conns: Held[]): void {
  for (const c of conns) {
    try {
      if ("destroy" in c) c.destroy();
      else c.close();
    } catch {
      // already closed
    }
  }
  conns.length = 0;
}
