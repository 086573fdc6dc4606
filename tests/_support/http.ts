/**
 * HTTP clients for end-to-end tests: one raw HTTP/1.1 exchange per connection (any Host can be
 * sent), and fetch over the admin Unix socket.
 */
import { concat } from "./bytes.ts";

/** A fetch client over a Unix socket (the admin socket). */
export async function adminFetch(
  socket: string,
  path: string,
  init: RequestInit = {},
): Promise<Response> {
  using client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
  const res = await fetch(`http://localhost${path}`, { ...init, client });
  const body = await res.arrayBuffer();
  return new Response(res.status === 204 || res.status === 304 ? null : body, {
    status: res.status,
    headers: res.headers,
  });
}

export interface RawResponse {
  status: number;
  text: string;
  headers: Headers;
  bytes: Uint8Array;
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
    out = concat([out, body.subarray(j + 2, j + 2 + size)]);
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
  using conn = await Deno.connect({ hostname: u.hostname, port: Number(u.port) });
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
    all = concat([all, buf.subarray(0, n)]);
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
}

/** GETs `url` with optional headers (a `host` header picks the virtual host). */
export function get(url: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return request(url, { headers });
}
