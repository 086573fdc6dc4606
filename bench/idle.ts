/**
 * The `idle-10k` measurement: many keep-alive client connections, each having made one request,
 * held open and idle, and how much the proxy's resident memory grew for them.
 */

const enc = new TextEncoder();

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

/** Closes every connection of `conns`. */
export function closeAll(conns: Deno.Conn[]): void {
  for (const c of conns) {
    try {
      c.close();
    } catch {
      // already closed
    }
  }
  conns.length = 0;
}
